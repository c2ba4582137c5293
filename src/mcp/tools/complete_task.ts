/** @module complete_task — closes a task and reports the files it changed, checked against its declared areas. */
import { formatLineTotals } from "@waymark/protocol/pr-summary";
import { compactProvenance } from "@waymark/protocol/provenance-wording";
import { completeTaskInput } from "@waymark/protocol/tools";
import type { CompleteTaskOutput } from "../../workflow/workflow-object";
import { WRITES } from "../annotations";
import { APP_LINK } from "../app";
import { notFound, shortList, taskStub } from "../context";
import { defineTool } from "../define";
// metrics is advertised by its key names only: its full schema would cost every agent ~300 bytes of context.
import { METRICS_DESCRIPTION } from "../fields";
import { RESUME_RECENT } from "../resume-text";

function render(out: CompleteTaskOutput): string {
  const f = out.files_changed;
  const v = out.verification;
  const lines = [
    `${out.task_id} ${out.status} in ${out.duration_seconds}s`,
    `added: ${shortList(f.added)}`,
    `modified: ${shortList(f.modified)}`,
    `deleted: ${shortList(f.deleted)}`,
  ];
  if (f.more)
    lines.push(`and ${f.more} more files recorded (each list above names the first; the task's file pages and the JSON export list all)`);
  if (f.renamed.length > 0) lines.push(`renamed: ${shortList(f.renamed.map((r) => `${r.from} → ${r.to}`))}`);
  if (f.uncommitted.length > 0) lines.push(`uncommitted: ${shortList(f.uncommitted)}`);
  // Provenance (the three-way wording every rendering shares): files, the agent's own edits, usage.
  lines.push(...compactProvenance({ name: out.task_id, files_changed: f, metrics: out.metrics }, shortList));
  // Review data the helper measured (@waymark/protocol/review), compactly.
  if (f.line_totals) lines.push(`lines: ${formatLineTotals(f.line_totals, f.line_authors)}`);
  if (f.commits)
    lines.push(
      `commits: ${f.commits.length === 0 ? "none" : shortList(f.commits.map((c) => `${c.sha} ${c.subject}`))}${f.branch ? ` (branch ${f.branch})` : ""}`,
    );
  lines.push(v.scope_match ? "scope: ok" : `scope: outside declared areas: ${shortList(v.unexpected_files)}`);
  for (const warning of v.warnings) lines.push(`warning: ${warning}`);
  return lines.join("\n");
}

export const completeTaskTool = defineTool({
  name: "complete_task",
  description: "Call when a task ends (its subtasks first).",
  input: completeTaskInput,
  opaqueInputs: { metrics: METRICS_DESCRIPTION },
  output: ["task_id", "status", "duration_seconds", "files_changed", "verification", "metrics", "checkpoint"],
  annotations: WRITES,
  meta: APP_LINK,
  run: async (input, ctx) => {
    const stub = taskStub(ctx, input.task_id);
    if (!stub) return notFound("task_id", input.task_id);
    // The helper (its data attached) keeps the workflow's state for its hooks: it comes back with the write.
    const completed = await stub.completeTask(ctx.account, input, ctx.credential, input.changes === undefined ? undefined : RESUME_RECENT);
    // The deployment that recorded it, for the helper's note in the repository (not stored: the same for every replay).
    if (completed.ok && completed.value.checkpoint) completed.value.checkpoint.origin = ctx.origin;
    return completed;
  },
  render,
});
