/**
 * @module provenance-fields
 * What the helper adds so the edge can say where each figure came from: its own identity on
 * what it computed, signed with this device's key (./device-key) over the data and the task so
 * an approved device's figures read "computed and signed"; the paths the agent's edit tools
 * touched during the task, only when the hooks observed the task (from their journal); and the
 * source of usage figures ("transcript" when summed from the agent's transcript, "agent" for
 * the agent's own claim: an agent never sets it). What it computed is redacted before it is
 * signed (@waymark/protocol/redact: paths, warnings, commit subjects, branch names, command lines):
 * secrets never leave the machine, and the edge's redaction of the same data changes nothing, so
 * the signature still verifies there.
 */
import { completionData, startData } from "@waymark/protocol/device-signature";
import { repoPathProblem } from "@waymark/protocol/paths";
import { redactHelperInput } from "@waymark/protocol/redact";
import type { AgentEdits, Changes, HelperSource, Metrics, Snapshot } from "@waymark/protocol/wire";
import { WIRE_LIMITS } from "@waymark/protocol/wire-constants";
import type { DeviceKey } from "./device-key.js";
import { SPOOLED_TOOL_CALLS } from "./hooks/hook-runner.js";
import { Journal } from "./hooks/journal.js";
import { drainSpool } from "./hooks/spool.js";
import { cacheRoot } from "./store.js";
import { PRICE_TABLE_DATE } from "./usage/prices.js";

export function helperSource(version: string): HelperSource {
  return { kind: "helper", version };
}

/** The changes as sent, signed with the helper's identity and the agent's edits when known. */
export function withProvenance(changes: Changes, version: string, edits: AgentEdits | undefined): Changes {
  if (changes.type === "unavailable") return { ...changes, source: helperSource(version) };
  return edits ? { ...changes, source: helperSource(version), agent_edits: edits } : { ...changes, source: helperSource(version) };
}

/**
 * The start snapshot as sent: the helper's identity, signed by this device for the workflow the
 * task starts in. `nonce`: the signature's, which the task's completion names.
 */
export function signedSnapshot(
  snapshot: Snapshot,
  version: string,
  key: DeviceKey | null,
  workflowId: unknown,
): { snapshot: Snapshot; nonce?: string } {
  const identified: Snapshot = { ...redactHelperInput(snapshot).value, source: helperSource(version) };
  if (!key || typeof workflowId !== "string") return { snapshot: identified };
  const device = key.signature("start_task", workflowId, startData(identified));
  return { snapshot: { ...identified, source: { ...helperSource(version), device } }, nonce: device.nonce };
}

/**
 * The changes as sent, signed by this device over them and the usage figures for the task being
 * completed, naming the nonce of its signed start (`startNonce`) when it had one.
 */
export function signedChanges(changes: Changes, metrics: unknown, key: DeviceKey | null, taskId: string, startNonce?: string): Changes {
  const redacted = redactHelperInput(changes).value;
  const source = redacted.source;
  if (!key || !source) return redacted;
  const device = key.signature("complete_task", taskId, completionData(redacted, metrics), startNonce);
  return { ...redacted, source: { ...source, device } };
}

/**
 * The paths the agent's own edit tools touched during the task, or undefined when no hook
 * recorded anything for this task (an agent whose hooks are not set up or not trusted, as Codex
 * skips untrusted hooks): then which files its tools edited is not observed, and nothing is said
 * either way. Paths the edge would refuse are left out and make the list `truncated` (it no
 * longer proves anything about the rest).
 */
export async function agentEdits(dir: string, taskId: string, cacheDir: string | undefined, top?: string): Promise<AgentEdits | undefined> {
  try {
    // The edits the agent's hooks spooled since the last look (./hooks/spool.ts) first; those made
    // in `dir` go to this journal without asking git for its repository again.
    const journal = await Journal.forDirectory(dir, cacheDir, top);
    await drainSpool(cacheDir ?? cacheRoot(), SPOOLED_TOOL_CALLS, new Map([[dir, journal]]));
    // Observed only when a tool hook recorded this task's work: a session seen proves nothing about its edits.
    const edits = await journal.editedPaths(taskId);
    if (edits.last_at === null) return undefined;
    const paths = edits.paths.filter((path) => repoPathProblem(path) === null).slice(0, WIRE_LIMITS.CHANGE_ENTRIES);
    const cut = edits.truncated || paths.length < edits.paths.length;
    return cut ? { paths, truncated: true } : { paths };
  } catch {
    return undefined;
  }
}

/** The agent's own usage figures, marked as its claim whatever it said about their source. */
export function agentMetrics(metrics: unknown): unknown {
  if (metrics === null || typeof metrics !== "object" || Array.isArray(metrics)) return metrics;
  const { source: _claimed, price_table_date: _date, ...figures } = metrics as Record<string, unknown>;
  return { ...figures, source: "agent" };
}

/**
 * Usage summed from the transcript, marked so, with the date of the price table its cost used
 * (none when no row priced its model: then there is no cost, and no table to name).
 */
export function transcriptSourced(metrics: Metrics): Metrics {
  const sourced: Metrics = { ...metrics, source: "transcript" };
  if (metrics.cost_usd !== undefined) sourced.price_table_date = PRICE_TABLE_DATE;
  return sourced;
}
