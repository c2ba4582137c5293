/**
 * `waymark summary` of a workflow larger than one page of any read: it prints exactly the
 * streamed Markdown export, every task and decision included.
 */
import { spawnSync } from "node:child_process";
import { beforeAll, describe, expect, it } from "vitest";
import { BIN, ensureBuilt, SYSTEM_NODE } from "../../client-helper/test/support";
import { pool } from "../support/agents";
import type { DevServer } from "../support/dev-server";
import { connect, ok } from "../support/mcp-client";
import { sharedDevServer } from "../support/shared-server";

let server: DevServer;

beforeAll(async () => {
  ensureBuilt();
  server = sharedDevServer();
});

/** More than one resource page of tasks (200) and of decisions. */
const TASKS = 230;

describe("wrangler dev + helper: the summary of a workflow several pages long", () => {
  it("prints the whole Markdown export", async () => {
    const client = await connect(server, { negotiation: "auto", name: "large-summary" });
    const tool = (name: string, args: Record<string, unknown>) => ok(client, name, args);
    const wf = (await tool("start_workflow", { name: "Several pages" })) as { workflow_id: string; share_url: string };
    const results = await pool(TASKS, 4, async (i) => {
      const task = (await tool("start_task", { workflow_id: wf.workflow_id, name: `Task ${i}`, goal: "g" })) as { task_id: string };
      await tool("log_decision", { task_id: task.task_id, category: "other", question: `Why ${i}?`, chosen: "this", reasoning: "r" });
      await tool("complete_task", { task_id: task.task_id, status: "success", outcome: { summary: `Done ${i}` } });
    });
    expect(results.filter((r) => r.status === "rejected")).toEqual([]);
    await client.close();

    const run = spawnSync(SYSTEM_NODE, [BIN, "summary", "--workflow", wf.workflow_id, "--url", `${server.url}/mcp`, "--link", "none"], {
      encoding: "utf8",
      env: { ...(process.env as Record<string, string>), WAYMARK_TOKEN: server.token },
    });
    expect(run.status, run.stderr).toBe(0);
    const exported = await (await fetch(`${wf.share_url}/export.md`)).text();
    expect(run.stdout).toBe(exported);
    expect(exported).toContain(`#### ${TASKS} Task`);
    expect(exported.match(/^- \*\*Why \d+\?\*\*/gm)).toHaveLength(TASKS);
  }, 300_000);
});
