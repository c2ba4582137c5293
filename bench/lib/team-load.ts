/**
 * One account driven by many concurrent agents for a set time: each agent is an SDK v2 client
 * with a workflow of its own, running tasks back to back (start_task, log_decision, log_issue, two
 * log_milestone, complete_task with files) until the deadline, then complete_workflow; the agents
 * start over the first sixth of the run (at most 30 s), as a team's do. Against a
 * server started with WAYMARK_METER=1, the account object's own throughput is read from the
 * deployment's meter (src/meter.ts): its requests, rows written and the time its callers waited
 * on it, against the workflow objects'. Every acknowledged write of a sample of the workflows is
 * read back (export and event log). Bounded by its deadline; stops by itself.
 */
import { type Acked, type AgentConnect, newAcked, pool, timed } from "../../test/support/agents.ts";
import { connect, type McpTarget } from "../../test/support/mcp-client.ts";
import { verifyWorkflow } from "../../test/support/readback.ts";
import { Recorder, type Summary, summarize } from "../../test/support/stats.ts";
import { expectedPushes, type Reply } from "./push-model.ts";

interface ObjectMeter {
  requests: number;
  methods: Record<string, number>;
  rows_written: number;
  call_ms: number;
}

interface MeterReading {
  worker_requests: number;
  objects: { workflow: ObjectMeter; account: ObjectMeter };
}

export interface ObjectThroughput {
  requests_per_second: number;
  rows_written_per_second: number;
  /** Mean time a caller waited on one call to this kind of object, ms. */
  mean_call_ms: number;
  /** Calls by method, per second. */
  methods_per_second: Record<string, number>;
}

export interface TeamLoadResult {
  agents: number;
  seconds: number;
  calls: number;
  calls_per_second: number;
  latency: Summary;
  by_tool: Record<string, Summary>;
  errors: string[];
  /** Workflows read back, and what did not match. */
  checked: number;
  problems: string[];
  account: ObjectThroughput | null;
  workflow: ObjectThroughput | null;
  /**
   * Account pushes per second the outbox's rules predict from the agents' replies (bench/lib/push-model.ts),
   * a push waiting the metered mean account call: with a push that ends with new events pushing again at
   * once (`loop`), and with those left to the window's alarm (`window`); null without the meter.
   */
  expected_pushes_per_second: { loop: number; window: number } | null;
}

async function readMeter(target: McpTarget): Promise<MeterReading | null> {
  const response = await fetch(`${target.url}/meter`);
  return response.ok ? ((await response.json()) as MeterReading) : null;
}

function throughput(before: ObjectMeter, after: ObjectMeter, seconds: number): ObjectThroughput {
  const requests = after.requests - before.requests;
  const methods: Record<string, number> = {};
  for (const [name, n] of Object.entries(after.methods)) {
    const delta = n - (before.methods[name] ?? 0);
    if (delta > 0) methods[name] = delta / seconds;
  }
  return {
    requests_per_second: requests / seconds,
    rows_written_per_second: (after.rows_written - before.rows_written) / seconds,
    mean_call_ms: requests > 0 ? (after.call_ms - before.call_ms) / requests : 0,
    methods_per_second: methods,
  };
}

const blob = (n: number) => n.toString(16).padStart(40, "e");

export async function teamLoad(
  target: McpTarget,
  options: { agents: number; seconds: number; filesPerTask?: number; checkWorkflows?: number; connectAgent?: AgentConnect },
): Promise<TeamLoadResult> {
  const files = options.filesPerTask ?? 2;
  const recorder = new Recorder();
  const acked: Acked[] = [];
  const replies: Reply[][] = [];
  const round = Math.random().toString(36).slice(2, 8);
  const meterBefore = await readMeter(target);
  const started = performance.now();
  const deadline = started + options.seconds * 1000;
  // A team's agents do not all connect in the same second: their starts spread over the first sixth of the run (30 s at most).
  const rampMs = Math.min(options.seconds * 1000, 180_000) / 6;
  const results = await pool(options.agents, options.agents, async (i) => {
    await new Promise((resolve) => setTimeout(resolve, (rampMs * i) / options.agents));
    const client = options.connectAgent
      ? await options.connectAgent(target, i)
      : await connect(target, { negotiation: "auto", name: `agent-${i}` });
    const mine: Reply[] = [];
    replies.push(mine);
    // Each call timed as before, and its reply's time kept for the push model.
    const timedCall = async (tool: string, args: Record<string, unknown>) => {
      const result = await timed(client, recorder, tool, args);
      mine.push({ tool, at: performance.now() });
      return result;
    };
    try {
      const wf = await timedCall("start_workflow", { name: `Team ${round} agent ${i}`, description: "team load" });
      const state = newAcked(String(wf.workflow_id), String(wf.share_url));
      acked.push(state);
      for (let t = 0; performance.now() < deadline; t++) {
        const task = String(
          (
            await timedCall("start_task", {
              workflow_id: state.workflowId,
              name: `Task ${t}`,
              goal: "g",
              areas: [`src/a${i}/**`],
            })
          ).task_id,
        );
        state.tasks.push(task);
        state.decisions.push(
          String(
            (
              await timedCall("log_decision", {
                task_id: task,
                category: "trade_off",
                question: `q${t}`,
                chosen: "a",
                reasoning: "r",
              })
            ).id,
          ),
        );
        state.issues.push(
          String((await timedCall("log_issue", { task_id: task, type: "bug_encountered", description: `d${t}`, resolution: "r" })).id),
        );
        for (const progress of [30, 70]) {
          state.milestones.push(String((await timedCall("log_milestone", { task_id: task, message: `${progress}%`, progress })).id));
        }
        const transitions = Array.from({ length: files }, (_, k) => ({
          path: `src/a${i}/t${t}/f${k}.ts`,
          before: null,
          after: { mode: "100644", blob: blob(i * 1_000_000 + t * 100 + k) },
        }));
        await timedCall("complete_task", {
          task_id: task,
          status: "success",
          outcome: { summary: `task ${t}` },
          changes: { type: "checksum", transitions },
        });
        state.completed.set(task, files);
      }
      await timedCall("complete_workflow", { workflow_id: state.workflowId, status: "success", summary: "done" });
      state.workflowCompleted = true;
    } finally {
      await client.close();
    }
  });
  const seconds = (performance.now() - started) / 1000;
  const meterAfter = await readMeter(target);
  const errors = results.flatMap((r) => (r.status === "rejected" ? [String(r.reason).slice(0, 300)] : []));
  const sample = acked.slice(0, options.checkWorkflows ?? 20);
  const problems = (await pool(sample.length, 4, (k) => verifyWorkflow(sample[k] as Acked))).flatMap((r) =>
    r.status === "fulfilled" ? r.value : [String(r.reason)],
  );
  const all = recorder.all();
  const account = meterBefore && meterAfter ? throughput(meterBefore.objects.account, meterAfter.objects.account, seconds) : null;
  const predicted = (loop: boolean) =>
    replies.reduce((sum, line) => sum + expectedPushes(line, account?.mean_call_ms ?? 0, loop), 0) / seconds;
  return {
    agents: options.agents,
    seconds,
    calls: all.length,
    calls_per_second: all.length / seconds,
    latency: summarize(all),
    by_tool: recorder.summaries(),
    errors,
    checked: sample.length,
    problems,
    account,
    workflow: meterBefore && meterAfter ? throughput(meterBefore.objects.workflow, meterAfter.objects.workflow, seconds) : null,
    expected_pushes_per_second: account ? { loop: predicted(true), window: predicted(false) } : null,
  };
}
