/**
 * @module ci/code-quality
 * GitLab's Code Quality report (the `artifacts:reports:codequality` JSON a merge request shows next
 * to the changed lines), in the format GitLab documents for custom tools: a JSON array of issues,
 * each with `description`, `check_name`, `fingerprint`, `severity` (info, minor, major, critical or
 * blocker), `location.path` and `location.lines.begin`; no byte order mark.
 */
import { createHash } from "node:crypto";
import { writeFile } from "node:fs/promises";
import type { Annotation } from "./workflow-commands.js";

export interface CodeQualityIssue {
  description: string;
  check_name: string;
  fingerprint: string;
  severity: "info" | "minor" | "major" | "critical" | "blocker";
  location: { path: string; lines: { begin: number; end?: number } };
}

const SEVERITY: Record<Annotation["kind"], CodeQualityIssue["severity"]> = { error: "major", warning: "minor", notice: "info" };

/** The report's issues, one per annotation: GitLab shows every one (it has no per-step cap). */
export function codeQualityIssues(annotations: readonly (Annotation & { check: string })[]): CodeQualityIssue[] {
  return annotations.map((annotation) => {
    const begin = annotation.line ?? 1;
    const end = annotation.endLine != null && annotation.endLine > begin ? annotation.endLine : undefined;
    return {
      description: `${annotation.title}: ${annotation.message}`,
      check_name: `waymark/${annotation.check}`,
      // Stable across runs for the same finding on the same file, so GitLab tells new findings from old.
      fingerprint: createHash("md5")
        .update(`${annotation.check}\0${annotation.file}\0${annotation.title}\0${annotation.message}`)
        .digest("hex"),
      severity: SEVERITY[annotation.kind],
      location: { path: annotation.file, lines: end === undefined ? { begin } : { begin, end } },
    };
  });
}

export async function writeCodeQuality(file: string, issues: readonly CodeQualityIssue[]): Promise<void> {
  await writeFile(file, `${JSON.stringify(issues, null, 2)}\n`);
}
