/**
 * @module provenance-fields
 * What the helper adds so the edge can say where each figure came from: its own identity on
 * the changes it computed, the paths the agent's edit tools touched during the task (from the
 * hooks' journal, when hooks ran), and the source of usage figures ("transcript" when summed
 * from the agent's transcript, "agent" for the agent's own claim: an agent never sets it).
 */
import { repoPathProblem } from "@waymark/protocol/paths";
import type { AgentEdits, Changes, HelperSource, Metrics } from "@waymark/protocol/wire";
import { WIRE_LIMITS } from "@waymark/protocol/wire-constants";
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
 * The paths the agent's own edit tools touched during the task, or undefined when no hook
 * ever ran for this repository (then nothing is known either way). Paths the edge would
 * refuse are left out and make the list `truncated` (it no longer proves anything about the rest).
 */
export async function agentEdits(dir: string, taskId: string, cacheDir: string | undefined, top?: string): Promise<AgentEdits | undefined> {
  try {
    // The edits the agent's hooks spooled since the last look (./hooks/spool.ts) first.
    const [journal] = await Promise.all([
      Journal.forDirectory(dir, cacheDir, top),
      drainSpool(cacheDir ?? cacheRoot(), SPOOLED_TOOL_CALLS),
    ]);
    const [session, edits] = await Promise.all([journal.session(), journal.editedPaths(taskId)]);
    if (!session && edits.paths.length === 0) return undefined;
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
