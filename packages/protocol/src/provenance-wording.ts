/**
 * @module provenance-wording
 * Where a record's figures come from, in one wording for every rendering (the page, the
 * Markdown export, `waymark summary`): which repository and branch a task ran in, whether its
 * files were computed by the Waymark helper (and which version) or reported by the client, which
 * changed files the agent's own edit tools did not touch, who wrote the added lines, whether
 * usage was summed from the agent's transcript or is the agent's claim, and what the agent
 * claimed of its checks next to what the hooks observed (./check-evidence.ts).
 */
import type { CheckLine } from "./check-evidence";
import { lineAuthorsText, type TaskLineAuthors } from "./line-authors";

export interface RepositoryRef {
  remote: string | null;
  branch: string | null;
  fingerprint: string | null;
  start_commit?: string | null;
  end_commit?: string | null;
}

export interface ProvenanceTask {
  name: string;
  repository?: RepositoryRef | null;
  files_changed: {
    added: string[];
    modified: string[];
    deleted: string[];
    renamed: unknown[];
    source?: { kind: "helper"; version: string } | { kind: "client" };
    not_by_agent_tools?: string[];
    line_authors?: TaskLineAuthors;
  } | null;
  metrics?: { source?: "transcript" | "agent" | null; price_table_date?: string | null } | null;
}

/** Who wrote a task's added lines, as a provenance statement (./line-authors.ts words it); null when its lines were not attributed. */
export function lineAuthorsStatement(authors: TaskLineAuthors | undefined): { label: string; text: string } | null {
  return authors ? { label: "Lines", text: lineAuthorsText(authors) } : null;
}

const shortCommit = (commit: string | null) => (commit ? commit.slice(0, 10) : null);

/** "github.com/acme/app · branch main", or null when no repository was reported. */
export function repositoryText(
  repository: { remote: string | null; branch: string | null; fingerprint: string | null } | null | undefined,
): string | null {
  if (!repository) return null;
  const name = repository.remote ?? `local repository ${repository.fingerprint?.slice(0, 12) ?? "(unidentified)"}`;
  return repository.branch ? `${name} · branch ${repository.branch}` : `${name} · detached HEAD`;
}

/** The provenance statements of one task, in reading order (empty for a task recorded before provenance was kept). */
export function taskProvenance(t: ProvenanceTask): { label: string; text: string; paths?: string[] }[] {
  const lines: { label: string; text: string; paths?: string[] }[] = [];
  const repo = t.repository;
  const where = repositoryText(repo);
  if (repo && where) {
    const commits = [shortCommit(repo.start_commit ?? null), shortCommit(repo.end_commit ?? null)].filter((c) => c !== null);
    lines.push({ label: "Repository", text: commits.length > 0 ? `${where} · ${commits.join(" → ")}` : where });
  }
  const f = t.files_changed;
  if (f?.source) {
    lines.push({
      label: "Files",
      text:
        f.source.kind === "helper"
          ? `computed by waymark-helper ${f.source.version}`
          : "reported by the client (not computed by the Waymark helper)",
    });
  }
  if (f?.not_by_agent_tools) {
    const listed = f.added.length + f.modified.length + f.deleted.length + f.renamed.length;
    const byAgent = Math.max(0, listed - f.not_by_agent_tools.length);
    lines.push(
      f.not_by_agent_tools.length === 0
        ? { label: "Agent edits", text: "every changed file was edited by the agent's own edit tools" }
        : {
            label: "Agent edits",
            text: `${byAgent} file(s) edited by the agent's own edit tools; not touched by them (a command, a generator or someone else):`,
            paths: f.not_by_agent_tools,
          },
    );
  }
  const authors = lineAuthorsStatement(f?.line_authors);
  if (authors) lines.push(authors);
  if (t.metrics?.source) {
    lines.push({
      label: "Usage",
      text:
        t.metrics.source === "transcript"
          ? `from the agent's transcript${t.metrics.price_table_date ? ` (cost from the price table of ${t.metrics.price_table_date})` : ""}`
          : "as reported by the agent (not verified)",
    });
  }
  return lines;
}

/** One task's lines of the Provenance section (none for a task recorded before provenance was kept). */
export function markdownTaskProvenance(task: ProvenanceTask, escapeMarkdown: (text: string) => string): string[] {
  const lines = taskProvenance(task);
  if (lines.length === 0) return [];
  return [
    `- **${escapeMarkdown(task.name)}**`,
    ...lines.map(
      (line) =>
        `  - ${line.label}: ${escapeMarkdown(line.text)}${line.paths ? ` ${line.paths.map((path) => escapeMarkdown(path)).join(", ")}` : ""}`,
    ),
  ];
}

/** A piece of a check's sentence: words, a command line, a time (ISO 8601), or an exit code (null: not observed). */
export type EvidenceSegment = string | { code: string } | { time: string } | { exit: number | null };

const CHECK_LABEL: Record<CheckLine["kind"], string> = { test: "Tests", build: "Build", lint: "Lint", typecheck: "Type-check" };
const CHECK_RUN: Record<CheckLine["kind"], string> = { test: "test run", build: "build", lint: "lint run", typecheck: "type-check" };
const CLAIMED_STATUS = { passed: "tests passed", failed: "tests failed", not_run: "tests not run" } as const;

/** "Tests", "Type-check": the label of one kind of check. */
export function checkLabel(line: CheckLine): string {
  return CHECK_LABEL[line.kind];
}

/** "exit 0 (passed)", "exit 1 (failed)", "exit code not observed": an exit code in words (never colour alone). */
export function exitWords(exit: number | null): string {
  if (exit === null) return "exit code not observed";
  return `exit ${exit} (${exit === 0 ? "passed" : "failed"})`;
}

/**
 * One kind of check in words, claim first: "claimed: tests passed · observed: `npm test` exit 0
 * at 14:02 after the last edit", "… · no test run observed after the last edit", and "not
 * observed" (never "no test run") when no hook could observe the task's commands.
 */
export function checkWording(line: CheckLine): EvidenceSegment[] {
  const out: EvidenceSegment[] = [];
  const claim = line.claim;
  if (claim?.status) out.push(`claimed: ${CLAIMED_STATUS[claim.status]}`);
  if (claim?.command !== undefined) out.push(claim.status ? " (ran " : "claimed: ran ", { code: claim.command }, claim.status ? ")" : "");
  if (!claim) out.push("no claim");
  out.push(" · ");
  const seen = line.observation;
  const noun = CHECK_RUN[line.kind];
  if (!seen) {
    out.push("not observed (no Waymark hook recorded this task's commands)");
    return out;
  }
  const after = seen.edited ? " after the last edit" : "";
  if (seen.last) {
    out.push("observed: ", { code: seen.last.command }, " ", { exit: seen.last.exit_code }, " at ", { time: seen.last.at }, after);
  } else {
    out.push(`no ${noun} observed${after}`);
    if (seen.before)
      out.push(
        " (last before it: ",
        { code: seen.before.command },
        " ",
        { exit: seen.before.exit_code },
        " at ",
        { time: seen.before.at },
        ")",
      );
  }
  if (seen.omitted > 0) out.push(` (${seen.omitted} more command(s) observed than recorded)`);
  return out;
}
