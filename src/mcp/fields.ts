/**
 * @module fields — the helper-only tool inputs (docs/attribution.md): the snapshot sent with
 * start_task and the changes sent with complete_task. Agent-facing inputs are in @waymark/protocol/tools.
 */
// ── Helper data (docs/attribution.md): declared once, in the shared wire contract ──

export { METRICS_DESCRIPTION } from "@waymark/protocol/wire";
