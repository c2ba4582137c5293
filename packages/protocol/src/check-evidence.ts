/**
 * @module check-evidence
 * What the record says about a task's checks (tests, build, lint, type-check): per kind, what the
 * agent claimed (its `tests_status`, the `commands_executed` it listed) next to what the helper's
 * hooks observed (docs/evidence.md): the last run of that kind after the agent's last edit, else
 * the last one before it, and every run of the kind in order. One reading for every rendering (the
 * page, the Markdown summary, `waymark summary`); ./provenance-wording.ts words it.
 */
import { COMMAND_KINDS, type CommandKind, commandKinds } from "./command-kind";
import type { CommandRunView, TaskMetadata, TaskView } from "./views/task";

/** One observed command, as the read model shows it (./views/task.ts). */
export type EvidenceRun = CommandRunView;

/** The parts of a task the evidence is read from: its claims, and the commands observed (absent or null: none observed). */
export type EvidenceTask = Partial<Pick<TaskView, "metadata" | "commands">>;

/** What the agent claimed about one kind of check. */
export interface CheckClaim {
  /** Its `tests_status` (tests only). */
  status?: TaskMetadata["tests_status"];
  /** The first command of this kind it listed in `commands_executed`. */
  command?: string;
}

/** What was observed of one kind of check; null when the task's commands were not observed at all. */
export interface CheckObservation {
  /** The last run of the kind after the last edit (or during the task, when no edit was recorded). */
  last: EvidenceRun | null;
  /** When none ran after the last edit: the last one before it. */
  before: EvidenceRun | null;
  /** Whether the agent's last edit is known (else every run counts as after it). */
  edited: boolean;
  /** Every observed run of the kind, in order. */
  runs: EvidenceRun[];
  /** Commands observed beyond the helper's bound, not sent (any kind). */
  omitted: number;
}

export interface CheckLine {
  kind: CommandKind;
  claim: CheckClaim | null;
  observation: CheckObservation | null;
}

const TEST_STATUSES = new Set(["passed", "failed", "not_run"]);

function claimOf(task: EvidenceTask, kind: CommandKind): CheckClaim | null {
  const claim: CheckClaim = {};
  const status = task.metadata?.tests_status;
  // Checked again: a record is read as it was stored, whatever wrote it.
  if (kind === "test" && status !== undefined && TEST_STATUSES.has(status)) claim.status = status;
  const command = (task.metadata?.commands_executed ?? []).find((line) => commandKinds(line).includes(kind));
  if (command !== undefined) claim.command = command;
  return claim.status === undefined && claim.command === undefined ? null : claim;
}

function observationOf(task: EvidenceTask, kind: CommandKind): CheckObservation | null {
  const commands = task.commands;
  if (!commands) return null;
  const runs = commands.runs.filter((run) => run.kinds.includes(kind));
  const edit = commands.last_edit_at === null ? null : Date.parse(commands.last_edit_at);
  const after = edit === null ? runs : runs.filter((run) => Date.parse(run.at) >= edit);
  const last = after.at(-1) ?? null;
  return { last, before: last === null ? (runs.at(-1) ?? null) : null, edited: edit !== null, runs, omitted: commands.omitted };
}

/**
 * The task's checks, in COMMAND_KINDS order: tests whenever anything was claimed or observed (so a
 * task whose commands were observed says whether a test ran), the other kinds when claimed or run.
 */
export function checkLines(task: EvidenceTask): CheckLine[] {
  const lines: CheckLine[] = [];
  for (const kind of COMMAND_KINDS) {
    const claim = claimOf(task, kind);
    const observation = observationOf(task, kind);
    const shown = kind === "test" ? claim !== null || observation !== null : claim !== null || (observation?.runs.length ?? 0) > 0;
    if (shown) lines.push({ kind, claim, observation });
  }
  return lines;
}
