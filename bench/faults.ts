/**
 * Faults at full size against one `wrangler dev` on 127.0.0.1 with persisted data:
 * --rounds times (default 3): --agents agents (default 20) run whole workflows while a WebSocket
 * follower tails one workflow; after a seeded number of acknowledged calls the whole server
 * (npx, wrangler, workerd) is killed with SIGKILL and restarted on the same data. Then every
 * workflow written so far must read back consistent (acknowledged writes present, no
 * half-written task, counts agree, events gap-free), and the follower, reconnecting from its
 * last seq, must have every event exactly once. The helper's connection-loss cases (killed,
 * answer lost, frozen) run in test/e2e/faults.test.ts; a page in Chromium across a restart
 * in test/browser/live.test.ts. Bounded by its counts; stops by itself.
 *
 *   npx node bench/faults.ts [--rounds 3] [--agents 20] [--tasks 5] [--seed 7] [--json out.json]
 */
import { writeFileSync } from "node:fs";
import { parseArgs } from "node:util";
import { type Acked, pool, runAgentWorkflow, timed } from "../test/support/agents.ts";
import { crashDevServer, startDevServer, waitDown } from "../test/support/dev-server.ts";
import { connect } from "../test/support/mcp-client.ts";
import { exportView, readEvents, verifyWorkflow } from "../test/support/readback.ts";
import { prng, Recorder } from "../test/support/stats.ts";

const { values } = parseArgs({
  options: {
    rounds: { type: "string", default: "3" },
    agents: { type: "string", default: "20" },
    tasks: { type: "string", default: "5" },
    seed: { type: "string", default: "7" },
    json: { type: "string" },
  },
});
const rounds = Number(values.rounds);
const agents = Number(values.agents);
const tasks = Number(values.tasks);
const random = prng(Number(values.seed));
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A live follower like a page: applies events in seq order, reconnects from its last seq. */
function follow(shareUrl: string) {
  const seen: number[] = [];
  let socket: WebSocket | null = null;
  const open = () => {
    const after = seen.at(-1) ?? 0;
    socket = new WebSocket(`${shareUrl.replace(/^http/, "ws")}/ws?after=${after}`);
    socket.addEventListener("message", (m) => {
      const body = JSON.parse(String(m.data)) as { type: string; event?: { seq: number }; seq?: number };
      if (body.type === "event" && body.event && body.event.seq > (seen.at(-1) ?? 0)) seen.push(body.event.seq);
      // A paged catch-up announces each further page; the follower pulls it.
      if (body.type === "more") socket?.send(JSON.stringify({ after: body.seq }));
    });
  };
  open();
  return { seen, reconnect: open, close: () => socket?.close() };
}

const server = await startDevServer();
const port = Number(new URL(server.url).port);
const report: { rounds: Record<string, number>[]; problems: string[]; follower?: Record<string, unknown> } = { rounds: [], problems: [] };
const written: Acked[] = [];
try {
  const owner = await connect(server, { negotiation: "auto" });
  const followed = await timed(owner, null, "start_workflow", { name: "Followed across crashes" });
  const followedTask = await timed(owner, null, "start_task", { workflow_id: followed.workflow_id, name: "Tailed", goal: "many events" });
  const follower = follow(String(followed.share_url));
  for (let round = 0; round < rounds; round++) {
    const recorder = new Recorder();
    const crashAfter = Math.floor(agents * (3 + 6 * tasks) * (0.2 + 0.6 * random()));
    const tail = (async () => {
      const client = await connect(server, { negotiation: "auto" });
      for (let i = 0; ; i++) await timed(client, null, "log_milestone", { task_id: followedTask.task_id, message: `round ${round} #${i}` });
    })().catch(() => {});
    const load = pool(agents, agents, async (i) =>
      runAgentWorkflow(await connect(server, { negotiation: "auto" }), {
        label: `r${round}a${i}`,
        tasks,
        recorder,
        onAcked: (a) => written.push(a),
      }),
    );
    const deadline = Date.now() + 120_000;
    while (recorder.all().length < crashAfter && Date.now() < deadline) await sleep(5);
    const t0 = performance.now();
    crashDevServer(port);
    const results = await load;
    await tail;
    await waitDown(server);
    await server.restart();
    const restartMs = performance.now() - t0;
    follower.reconnect();
    const problems: string[] = [];
    for (const acked of written) problems.push(...(await verifyWorkflow(acked)));
    report.rounds.push({
      round,
      acknowledged_calls_before_kill: recorder.all().length,
      interrupted_agents: results.filter((r) => r.status === "rejected").length,
      workflows_verified: written.length,
      kill_to_serving_ms: Math.round(restartMs),
      problems: problems.length,
    });
    report.problems.push(...problems);
    console.log(
      `round ${round}: killed after ${recorder.all().length} acknowledged calls, ${written.length} workflows verified, ` +
        `back in ${(restartMs / 1000).toFixed(1)} s, problems ${problems.length}`,
    );
  }
  // The follower has caught up: every event of the followed workflow exactly once, in order.
  const view = await exportView(String(followed.share_url));
  const deadline = Date.now() + 10_000;
  while (follower.seen.length < view.last_seq && Date.now() < deadline) await sleep(50);
  follower.close();
  const events = await readEvents(String(followed.share_url));
  const expected = events.map((e) => e.seq).join(",");
  const ok = follower.seen.join(",") === expected && follower.seen.length === view.last_seq;
  report.follower = { events: follower.seen.length, last_seq: view.last_seq, exactly_once_in_order: ok };
  if (!ok) report.problems.push(`follower saw ${follower.seen.length} events, log has ${view.last_seq}`);
  console.log(`live follower across ${rounds} kills: ${follower.seen.length} of ${view.last_seq} events, exactly once in order: ${ok}`);
} finally {
  await server.stop();
}
for (const p of report.problems.slice(0, 20)) console.log(`  ${p}`);
console.log(`problems: ${report.problems.length}`);
if (values.json) writeFileSync(values.json, `${JSON.stringify(report, null, 2)}\n`);
process.exitCode = report.problems.length > 0 ? 1 : 0;
