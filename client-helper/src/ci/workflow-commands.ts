/**
 * @module ci/workflow-commands
 * What a GitHub Actions step writes for the runner, in GitHub's own formats:
 * - annotations: `::error file=…,line=…,title=…::message` on stdout, with the runner's escaping
 *   (data: `%` `\r` `\n` as %25 %0D %0A; properties also `:` and `,` as %3A %2C), at most
 *   ANNOTATIONS_PER_KIND of each kind (GitHub shows no more per step; the rest are counted);
 * - outputs: appended to the GITHUB_OUTPUT file as `name<<delimiter` blocks, with a random
 *   delimiter that neither the name nor the value contains (multiline-safe);
 * - the job summary: Markdown appended to GITHUB_STEP_SUMMARY, kept under GitHub's 1 MiB per step.
 */
import { randomUUID } from "node:crypto";
import { appendFile } from "node:fs/promises";

/** GitHub shows 10 error, 10 warning and 10 notice annotations per step. */
export const ANNOTATIONS_PER_KIND = 10;
/** GitHub's cap is 1 MiB per step's summary: a little is kept for the note that says it was cut. */
export const SUMMARY_MAX_BYTES = 1024 * 1024 - 4096;

export type AnnotationKind = "error" | "warning" | "notice";

export interface Annotation {
  kind: AnnotationKind;
  file: string;
  line: number | null;
  endLine?: number | null;
  title: string;
  message: string;
}

export const escapeData = (text: string) => text.replace(/%/g, "%25").replace(/\r/g, "%0D").replace(/\n/g, "%0A");
export const escapeProperty = (text: string) => escapeData(text).replace(/:/g, "%3A").replace(/,/g, "%2C");

/** One annotation as the workflow command the runner reads. */
export function annotationCommand(annotation: Annotation): string {
  const properties = [`file=${escapeProperty(annotation.file)}`];
  if (annotation.line !== null) {
    properties.push(`line=${annotation.line}`);
    if (annotation.endLine != null && annotation.endLine > annotation.line) properties.push(`endLine=${annotation.endLine}`);
  }
  properties.push(`title=${escapeProperty(annotation.title)}`);
  return `::${annotation.kind} ${properties.join(",")}::${escapeData(annotation.message)}`;
}

/** The commands for the annotations GitHub will show (the first of each kind), and how many it would not. */
export function annotationCommands(annotations: readonly Annotation[]): { lines: string[]; left_out: number } {
  const shown: Record<AnnotationKind, number> = { error: 0, warning: 0, notice: 0 };
  const lines: string[] = [];
  let leftOut = 0;
  for (const annotation of annotations) {
    if (shown[annotation.kind] >= ANNOTATIONS_PER_KIND) {
      leftOut++;
      continue;
    }
    shown[annotation.kind]++;
    lines.push(annotationCommand(annotation));
  }
  return { lines, left_out: leftOut };
}

/** Appends outputs to the GITHUB_OUTPUT file, each in the delimiter form so any value (multiline included) is safe. */
export async function writeOutputs(file: string, outputs: Record<string, string>): Promise<void> {
  let text = "";
  for (const [name, value] of Object.entries(outputs)) {
    const delimiter = `ghadelimiter_${randomUUID()}`;
    // A value holding its delimiter would end early and set outputs of its own choosing.
    if (name.includes(delimiter) || value.includes(delimiter)) throw new Error(`output ${name}: holds its own delimiter`);
    text += `${name}<<${delimiter}\n${value}\n${delimiter}\n`;
  }
  await appendFile(file, text);
}

const utf8 = new TextEncoder();

/** Markdown cut to at most `maxBytes` (whole lines), with a note saying where the rest is. */
export function boundedMarkdown(markdown: string, maxBytes: number, rest: string): string {
  if (utf8.encode(markdown).length <= maxBytes) return markdown;
  const note = `\n\n… cut to stay within ${maxBytes} bytes: ${rest}\n`;
  const budget = maxBytes - utf8.encode(note).length;
  let used = 0;
  const kept: string[] = [];
  for (const line of markdown.split("\n")) {
    const size = utf8.encode(line).length + 1;
    if (used + size > budget) break;
    kept.push(line);
    used += size;
  }
  return `${kept.join("\n")}${note}`;
}

/** Appends the report to the step summary, within GitHub's bound. */
export async function writeSummary(file: string, markdown: string): Promise<void> {
  await appendFile(file, boundedMarkdown(markdown, SUMMARY_MAX_BYTES, "`waymark ci --json` in the job's log has everything"));
}
