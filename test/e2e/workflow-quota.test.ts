/**
 * A workflow at its byte quota (LIMITS.WORKFLOW_BYTES) stays completable and readable, against a
 * `wrangler dev` of its own: filled with tasks of 20,000 files with long paths until start_task is
 * refused, the task it left open still completes with 20,000 files of its own, the workflow
 * completes, and the share page and the whole JSON export (every task, every file) are read back.
 * In the alone project: filling it loads the server for a minute or more.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { LIMITS } from "../../src/limits";
import { type CallTool, toolCaller } from "../pages/fixture";
import { type DevServer, startDevServer } from "../support/dev-server";
import { type FilledWorkflow, fillToQuota, longPathChanges } from "../support/wide-workflow";

const FILES = 20_000;
const PATH_BYTES = 200;

let server: DevServer;
let callTool: CallTool;
let full: FilledWorkflow;

beforeAll(async () => {
  server = await startDevServer();
  callTool = toolCaller(fetch, `${server.url}/mcp`, server.token);
  full = await fillToQuota(callTool, FILES, PATH_BYTES);
}, 1_200_000);
afterAll(async () => server?.stop());

describe("a workflow at its byte quota", () => {
  it("refuses new work by name, after the tasks that fit", () => {
    expect(full.refusal).toContain(`workflow: at most ${LIMITS.WORKFLOW_BYTES} bytes stored per workflow`);
    expect(full.taskIds.length).toBeGreaterThan(0);
  });

  it("completes its open task with 20,000 files, and the workflow", async () => {
    const done = await callTool("complete_task", {
      task_id: full.openTaskId,
      status: "success",
      outcome: { summary: "Done past the quota" },
      changes: longPathChanges(999, FILES, PATH_BYTES),
    });
    expect(
      (done.files_changed as { more?: number; added: string[] }).added.length + ((done.files_changed as { more?: number }).more ?? 0),
    ).toBe(FILES);
    const closed = await callTool("complete_workflow", { workflow_id: full.workflowId, status: "success", summary: "Full" });
    expect(closed.status).toBe("success");
  }, 300_000);

  it("its share page and its whole JSON export read back: every task, every file", async () => {
    const page = await fetch(full.shareUrl);
    expect(page.status).toBe(200);
    const html = await page.text();
    expect(html).toContain("Left open");
    expect(html).toContain(`Files changed (${FILES.toLocaleString("en-US")})`);
    const exported = await fetch(`${full.shareUrl}/export.json`);
    expect(exported.status).toBe(200);
    const view = (await exported.json()) as { workflow: { status: string }; tasks: { id: string; files_changed: { added: string[] } }[] };
    expect(view.workflow.status).toBe("success");
    expect(view.tasks.map((t) => t.id).sort()).toEqual([full.openTaskId, ...full.taskIds].sort());
    for (const task of view.tasks) expect(task.files_changed.added).toHaveLength(FILES);
  }, 300_000);
});
