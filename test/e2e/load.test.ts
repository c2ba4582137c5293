import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Acked, connect, newAcked, pool, Recorder, runAgentWorkflow, summarize, timed, verifyWorkflow } from "../../bench/lib/harness";
import { type DevServer, startDevServer } from "../support/dev-server";

/**
 * Bounded load through a real `wrangler dev` on 127.0.0.1 (the full-size run is bench/load.mjs):
 * concurrent agents with whole workflows, and concurrent writers on one workflow. No call may
 * fail, and everything acknowledged must be read back with a gap-free event log.
 */
let server: DevServer;

beforeAll(async () => {
  server = await startDevServer();
});
afterAll(async () => {
  await server?.stop();
});

const fmt = (xs: number[]) => {
  const s = summarize(xs);
  return `n=${s.n} median ${s.median.toFixed(1)} ms, p95 ${s.p95.toFixed(1)} ms, p99 ${s.p99.toFixed(1)} ms`;
};

describe("load through wrangler dev", () => {
  it("10 concurrent agents run whole workflows without an error", async () => {
    const recorder = new Recorder();
    const results = await pool(10, 10, async (i) => runAgentWorkflow(await connect(server), { label: `agent${i}`, tasks: 2, recorder }));
    const failures = results.filter((r) => r.status === "rejected").map((r) => String((r as PromiseRejectedResult).reason));
    expect(failures).toEqual([]);
    const calls = recorder.all();
    expect(calls.length).toBe(10 * (3 + 6 * 2));
    console.log(`10 agents: ${fmt(calls)}`);
    for (const r of results) {
      if (r.status === "fulfilled") expect(await verifyWorkflow(r.value)).toEqual([]);
    }
  });

  it("8 concurrent writers on one workflow: every acknowledged write is there, events gap-free", async () => {
    const owner = await connect(server);
    const wf = await timed(owner, null, "start_workflow", { name: "Many writers" });
    const acked: Acked = newAcked(String(wf.workflow_id), String(wf.share_url));
    const shared: string[] = [];
    for (const name of ["Shared A", "Shared B"]) {
      const task = await timed(owner, null, "start_task", { workflow_id: acked.workflowId, name, goal: "take many writes" });
      shared.push(String(task.task_id));
    }
    acked.tasks.push(...shared);
    const recorder = new Recorder();
    const results = await pool(8, 8, async (w) => {
      const client = await connect(server);
      for (let i = 0; i < 6; i++) {
        const taskId = shared[i % 2] as string;
        const ms = await timed(client, recorder, "log_milestone", { task_id: taskId, message: `writer ${w} #${i}`, progress: i * 10 });
        acked.milestones.push(String(ms.id));
      }
      const decision = await timed(client, recorder, "log_decision", {
        task_id: shared[w % 2],
        category: "trade_off",
        question: `writer ${w}?`,
        chosen: "yes",
        reasoning: "load",
      });
      acked.decisions.push(String(decision.id));
      // Its own subtask, started and completed while the others write.
      const own = await timed(client, recorder, "start_task", {
        workflow_id: acked.workflowId,
        parent_task_id: shared[0],
        name: `Writer ${w}`,
        goal: "own work",
      });
      acked.tasks.push(String(own.task_id));
      await timed(client, recorder, "complete_task", { task_id: own.task_id, status: "success", outcome: { summary: `writer ${w}` } });
      acked.completed.set(String(own.task_id), 0);
    });
    expect(results.filter((r) => r.status === "rejected").map((r) => String((r as PromiseRejectedResult).reason))).toEqual([]);
    console.log(`8 writers on one workflow: ${fmt(recorder.all())}`);
    expect(acked.milestones).toHaveLength(48);
    expect(await verifyWorkflow(acked)).toEqual([]);
  });
});
