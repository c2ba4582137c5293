/**
 * @module domain/provenance
 * Where each recorded figure comes from, decided from what the call carried and whether an
 * approved device signed it (domain/device-signature): files_changed computed and signed, claimed
 * by the client, or not observed; which changed files the agent's own edit tools did not touch
 * (only where the helper says the hooks observed the task); usage summed from the agent's
 * transcript and signed, or claimed; which shell commands the helper's hooks observed. The wording is @waymark/protocol/provenance-wording;
 * docs/provenance.md states the rules and the threat model.
 */
import type { DeviceRef } from "@waymark/protocol/views/common";
import type { FilesChanged, FilesSource, LineDurability, TaskMetrics, TaskRepository } from "@waymark/protocol/views/task";
import type { Changes, DirtyEntry, Metrics, ObservedCommands, Repository } from "@waymark/protocol/wire";
import { LIMITS } from "../limits";
import { NOT_SIGNED, type SignatureVerdict } from "./device-signature";

export type { FilesSource, TaskRepository } from "@waymark/protocol/views/task";

/**
 * Where a task's files came from, and (only when the helper said its hooks observed the task's
 * work) the changed files the agent's edit tools did not touch: as trustworthy as `source`.
 */
export type FilesProvenance = Required<Pick<FilesChanged, "source">> & Pick<FilesChanged, "not_by_agent_tools">;

/** What the edge decides of reported usage: "transcript" only when an approved device signed the figures; every other figure is the client's claim. */
export type MetricsProvenance = { source: NonNullable<TaskMetrics["source"]>; price_table_date?: string; device?: DeviceRef };

/** The start snapshot's signature as start_task recorded it: which device, and its nonce. */
export interface StartSignature {
  fingerprint: string;
  nonce: string;
}

/**
 * What a completion's signature makes of its figures: its files are the device's only when the
 * same device signed the task's start (the completion names that start's nonce), as the files are
 * the difference between the two; its usage needs only the completion's own signature.
 */
export interface Trust {
  files: DeviceRef | null;
  usage: DeviceRef | null;
  /** Why the files are not the device's (shown with the claim). */
  reason: string;
}

export const UNSIGNED: Trust = { files: null, usage: null, reason: NOT_SIGNED };

export function trustOf(verdict: SignatureVerdict, start: StartSignature | null): Trust {
  if (!verdict.ok) return { files: null, usage: null, reason: verdict.reason };
  const sameStart = start !== null && start.fingerprint === verdict.device.fingerprint && start.nonce === verdict.start_nonce;
  if (sameStart) return { files: verdict.device, usage: verdict.device, reason: "" };
  return { files: null, usage: verdict.device, reason: "its start snapshot was not signed by the same device" };
}

/** What start_task records of a verified start signature (null: the start was not the device's). */
export function startSignature(verdict: SignatureVerdict): StartSignature | null {
  return verdict.ok ? { fingerprint: verdict.device.fingerprint, nonce: verdict.nonce } : null;
}

/** The source of a task's files: nothing observed, computed and signed, or the client's claim. */
export function filesSource(changes: Changes | null | undefined, trust: Trust = UNSIGNED): FilesSource {
  if (!changes) return { kind: "not_observed", reason: "no file changes were sent" };
  if (changes.type === "unavailable") return { kind: "not_observed", reason: "no observation was sent; the warnings say why" };
  const declared = changes.source?.kind === "helper" ? changes.source.version : undefined;
  if (trust.files && declared) return { kind: "signed", version: declared, device: trust.files };
  return declared ? { kind: "claimed", version: declared, reason: trust.reason } : { kind: "claimed", reason: trust.reason };
}

/**
 * Provenance of a task's files_changed. `changedPaths` are the attributed paths; the agent's
 * edits are only sent where the hooks observed the task, and a cut list of edits proves nothing
 * about the rest.
 */
export function filesProvenance(changes: Changes | null, changedPaths: readonly string[], trust: Trust = UNSIGNED): FilesProvenance {
  const source = filesSource(changes, trust);
  const provenance: FilesProvenance = { source };
  const edits = changes && changes.type !== "unavailable" ? changes.agent_edits : undefined;
  if (source.kind !== "not_observed" && edits && !edits.truncated) {
    const edited = new Set(edits.paths);
    provenance.not_by_agent_tools = changedPaths.filter((path) => !edited.has(path));
  }
  return provenance;
}

/**
 * Provenance of reported usage: "transcript" only when the helper said so and an approved device
 * signed the call that carries it; every other figure is the client's claim. Null without metrics.
 */
export function metricsProvenance(metrics: Metrics | undefined, trust: Trust = UNSIGNED): MetricsProvenance | null {
  if (!metrics) return null;
  if (metrics.source !== "transcript" || !trust.usage) return { source: "agent" };
  return {
    source: "transcript",
    ...(metrics.price_table_date ? { price_table_date: metrics.price_table_date } : {}),
    device: trust.usage,
  };
}

/** The dirty paths of a start snapshot, when it named every one and they fit the record's bound; else undefined. */
function namedDirtyPaths(dirty: readonly DirtyEntry[], omitted: number): string[] | undefined {
  if (omitted > 0 || dirty.length > LIMITS.DIRTY_PATHS_NAMED) return undefined;
  let bytes = 0;
  for (const entry of dirty) bytes += entry.path.length + 3;
  if (bytes > LIMITS.DIRTY_PATHS_NAMED_BYTES) return undefined;
  return dirty.map((entry) => entry.path).sort();
}

/** The task's repository from the helper's start snapshot (null when the helper sent none). */
export function taskRepository(
  repository: Repository | undefined,
  startCommit: string | null,
  dirty: readonly DirtyEntry[],
  dirtyOmitted: number,
): TaskRepository | null {
  if (!repository) return null;
  const named = namedDirtyPaths(dirty, dirtyOmitted);
  return {
    fingerprint: repository.fingerprint,
    remote: repository.remote,
    branch: repository.branch,
    start_commit: startCommit,
    end_commit: null,
    dirty_at_start: dirty.length + dirtyOmitted,
    ...(named ? { dirty_paths_at_start: named } : {}),
  };
}

/** The commit the task ended on: the helper's git changes name it; other kinds do not. */
export function endCommit(changes: Changes | null): string | null {
  return changes?.type === "git" ? changes.head : null;
}

/**
 * Earlier tasks' lines the helper found still present or gone, with the time as the read model
 * writes times; only from the helper (like its commands). Null: none reported.
 */
export function durabilityReported(changes: Changes | null): LineDurability[] | null {
  if (!changes || changes.type === "unavailable" || changes.source?.kind !== "helper" || !changes.durability?.length) return null;
  return changes.durability.map((seen) => ({ ...seen, at: new Date(seen.at).toISOString() }));
}

/**
 * The shell commands the helper's hooks observed, oldest first: evidence only from the helper (a
 * client's own list would be a claim, and the agent's claims are in its outcome and metadata).
 * Null: not observed.
 */
export function observedCommands(changes: Changes | null): ObservedCommands | null {
  // Only the helper's hooks observe commands: a list from a client that does not even say it is
  // the helper is dropped. Whether a device signed it is the task's files verdict (filesSource).
  if (!changes || changes.type === "unavailable" || changes.source?.kind !== "helper" || !changes.commands) return null;
  const runs = changes.commands.runs.map((run, index) => ({ run, index }));
  runs.sort((a, b) => a.run.at - b.run.at || a.index - b.index);
  return { ...changes.commands, runs: runs.map(({ run }) => run) };
}
