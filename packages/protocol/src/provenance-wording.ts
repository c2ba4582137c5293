/**
 * @module provenance-wording
 * Where a record's figures come from, in one wording for every rendering (the page, the JSON and
 * Markdown exports, `waymark summary`, the tool results). Every figure is one of three things:
 *
 * - **computed and signed**: the Waymark helper computed it on a device the account's owner
 *   approved, and the device's signature over exactly this data and this task verified at the edge;
 * - **claimed by the client**: whatever a client sent without such a signature (a direct MCP
 *   client, a helper whose device is not approved, a forged or replayed signature, a revoked
 *   device), recorded as that client's claim with the reason the edge gave;
 * - **not observed**: nothing observed it. Never stated as a negative: where no hook observed a
 *   task's work, which files the agent's own tools edited is "not observed", not "none".
 *
 * Who wrote a task's added lines (./line-authors.ts) is stated alongside, in its own words, and
 * so is what the agent claimed of its checks next to what the hooks observed (./check-evidence.ts).
 *
 * The recorded shapes (./views/task.ts) are what the edge writes (src/domain/provenance.ts) and the
 * JSON export carries; records written before devices signed (`{kind: "helper"}`, `{kind: "client"}`,
 * usage from a transcript without a device) read as claims, which is all they ever were.
 */
import type { CheckLine } from "./check-evidence";
import { lineAuthorsText, type TaskLineAuthors } from "./line-authors";
import type { DeviceRef } from "./views/common";
import type { FilesSource, TaskMetrics, TaskRepository, TaskView } from "./views/task";
import { counted } from "./wording";

export type { DeviceRef } from "./views/common";
export type { FilesSource } from "./views/task";

export const PROVENANCE_KINDS = ["signed", "claimed", "not_observed"] as const;
/** The three-way verdict on one figure; the JSON export's `kind` values are these words. */
export type ProvenanceKind = (typeof PROVENANCE_KINDS)[number];

/** The short term of each kind, as the page's tags and the compact tool results show it. */
export const PROVENANCE_TERMS: Record<ProvenanceKind, string> = {
  signed: "computed and signed",
  claimed: "claimed by the client",
  not_observed: "not observed",
};

/** Where a task's usage came from: its source, price table and the device that signed it (only with "transcript"). */
export type UsageSource = Pick<TaskMetrics, "source" | "price_table_date" | "device">;

/** A repository as a record names it: a workflow's (no commits) or a task's. */
type RepositoryRef = Pick<TaskRepository, "remote" | "branch" | "fingerprint">;

/** The parts of a task (./views/task.ts) its provenance is read from. */
export type ProvenanceTask = Pick<TaskView, "name" | "files_changed"> & Partial<Pick<TaskView, "repository" | "metrics">>;

/**
 * One statement of a task's provenance: what it is about, which of the three kinds, the sentence.
 * A kinded sentence starts with its kind's term (PROVENANCE_TERMS); `rest` is what follows it, for
 * renderings that show the term as a tag.
 */
export interface ProvenanceLine {
  label: string;
  kind?: ProvenanceKind;
  text: string;
  rest?: string;
  paths?: string[];
}

function stated(label: string, kind: ProvenanceKind, rest: string, paths?: string[]): ProvenanceLine {
  const line: ProvenanceLine = { label, kind, text: `${PROVENANCE_TERMS[kind]}${rest}`, rest };
  if (paths) line.paths = paths;
  return line;
}

/** Who wrote a task's added lines, as a provenance statement (./line-authors.ts words it); null when its lines were not attributed. */
export function lineAuthorsStatement(authors: TaskLineAuthors | undefined): { label: string; text: string } | null {
  return authors ? { label: "Lines", text: lineAuthorsText(authors) } : null;
}

const shortCommit = (commit: string | null) => (commit ? commit.slice(0, 10) : null);

/** `device “laptop” (SHA256:AbCdEfGhIjKl…)`: the owner's name and enough of the fingerprint to compare. */
export function deviceText(device: DeviceRef): string {
  return `device “${device.name}” (${device.fingerprint.slice(0, 19)}…)`;
}

/** "github.com/acme/app · branch main", or null when no repository was reported. */
export function repositoryText(repository: RepositoryRef | null | undefined): string | null {
  if (!repository) return null;
  const name = repository.remote ?? `local repository ${repository.fingerprint?.slice(0, 12) ?? "(unidentified)"}`;
  return repository.branch ? `${name} · branch ${repository.branch}` : `${name} · detached HEAD`;
}

/** The three-way verdict on a task's files, legacy records read as claims. */
export function filesKind(source: FilesSource): ProvenanceKind {
  if (source.kind === "signed") return "signed";
  if (source.kind === "not_observed") return "not_observed";
  return "claimed";
}

/** What a claim says it is, and why the edge did not take it as computed. */
function claimRest(version: string | undefined, reason: string | undefined): string {
  const said = version ? `it says waymark-helper ${version} computed them` : "";
  const parts = [said, reason].filter((part) => part);
  return parts.length > 0 ? ` (${parts.join("; ")})` : "";
}

/** What follows the term in the statement about a task's files. */
function filesRest(source: FilesSource): string {
  switch (source.kind) {
    case "signed":
      return ` by waymark-helper ${source.version} on ${deviceText(source.device)}`;
    case "claimed":
      return claimRest(source.version, source.reason);
    case "not_observed":
      return ` (${source.reason})`;
    case "helper":
      return claimRest(source.version, "recorded before devices signed");
    case "client":
      return claimRest(undefined, "not signed");
  }
}

/**
 * Which changed files the agent's own edit tools touched. Stated only where the hooks observed the
 * task (`not_by_agent_tools` present), and only as trustworthy as the files' own source.
 */
function agentEditsLine(
  files: NonNullable<ProvenanceTask["files_changed"]>,
  kind: ProvenanceKind,
  device: DeviceRef | null,
): ProvenanceLine {
  const notByAgent = files.not_by_agent_tools;
  if (notByAgent === undefined) {
    return stated(
      "Agent edits",
      "not_observed",
      " (no hook of the agent recorded this task's work, so which files its own edit tools touched is not known)",
    );
  }
  const by = kind === "signed" && device ? ` (the agent's hooks, on ${deviceText(device)}): ` : ": ";
  const listed = files.added.length + files.modified.length + files.deleted.length + files.renamed.length;
  const byAgent = Math.max(0, listed - notByAgent.length);
  return notByAgent.length === 0
    ? stated("Agent edits", kind, `${by}every changed file was edited by the agent's own edit tools`)
    : stated(
        "Agent edits",
        kind,
        `${by}${counted(byAgent, "file")} edited by the agent's own edit tools; not touched by them (a command, a generator or someone else):`,
        notByAgent,
      );
}

export function usageLine(metrics: UsageSource): ProvenanceLine | null {
  if (!metrics.source) return null;
  const priced = metrics.price_table_date ? `; cost from the price table of ${metrics.price_table_date}` : "";
  if (metrics.source === "transcript" && metrics.device) {
    return stated("Usage", "signed", ` (summed from the agent's transcript by waymark-helper on ${deviceText(metrics.device)}${priced})`);
  }
  if (metrics.source === "transcript") {
    return stated("Usage", "claimed", claimRest(undefined, "it says: from the agent's transcript; recorded before devices signed"));
  }
  return stated("Usage", "claimed", "");
}

/** The provenance statements of one task, in reading order (empty for a task recorded before provenance was kept). */
export function taskProvenance(t: ProvenanceTask): ProvenanceLine[] {
  const lines: ProvenanceLine[] = [];
  const repo = t.repository;
  const where = repositoryText(repo);
  if (repo && where) {
    const commits = [shortCommit(repo.start_commit ?? null), shortCommit(repo.end_commit ?? null)].filter((c) => c !== null);
    lines.push({ label: "Repository", text: commits.length > 0 ? `${where} · ${commits.join(" → ")}` : where });
  }
  const f = t.files_changed;
  if (f?.source) {
    const kind = filesKind(f.source);
    lines.push(stated("Files", kind, filesRest(f.source)));
    // Which of its files the agent's tools edited: asked only of a task that changed some.
    const changed = f.added.length + f.modified.length + f.deleted.length + f.renamed.length + (f.more ?? 0) > 0;
    if (kind !== "not_observed" && changed) lines.push(agentEditsLine(f, kind, f.source.kind === "signed" ? f.source.device : null));
    const authors = lineAuthorsStatement(f?.line_authors);
    if (authors) lines.push(authors);
  }
  const usage = t.metrics ? usageLine(t.metrics) : null;
  if (usage) lines.push(usage);
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
  if (seen.omitted > 0) out.push(` (${counted(seen.omitted, "more command", "more commands")} observed than recorded)`);
  return out;
}

/**
 * The same statements as short plain-text lines for a tool result (`files: …`), paths cut by
 * `list` (the tool's own short list): an agent reads them, so they cost context.
 */
export function compactProvenance(task: ProvenanceTask, list: (paths: string[]) => string): string[] {
  return taskProvenance(task)
    .filter((line) => line.label !== "Repository")
    .map((line) => `${line.label.toLowerCase()}: ${line.text}${line.paths ? ` ${list(line.paths)}` : ""}`);
}
