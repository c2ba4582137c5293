/**
 * Server render time of a shared workflow page, its JSON and its Markdown export, measured
 * against a real `wrangler dev` (full HTTP round trips).
 *
 *   npx node bench/pages.ts [tasks=500] [runs=20]
 */
import { checksumChanges, connect, timed } from "../test/support/agents.ts";
import { startDevServer } from "../test/support/dev-server.ts";
import { summarize } from "../test/support/stats.ts";

const tasks = Number(process.argv[2] ?? 500);
const runs = Number(process.argv[3] ?? 20);
if (!Number.isInteger(tasks) || tasks < 1 || tasks > 5000 || !Number.isInteger(runs) || runs < 1 || runs > 1000) {
  console.error("usage: npx node bench/pages.ts [tasks 1..5000] [runs 1..1000]");
  process.exit(2);
}
const server = await startDevServer();
try {
  const client = await connect(server);
  const wf = await timed(client, null, "start_workflow", { name: `Bench ${tasks} tasks`, plan: [{ step: "1", goal: "many tasks" }] });
  for (let i = 0; i < tasks; i++) {
    const task = await timed(client, null, "start_task", {
      workflow_id: wf.workflow_id,
      name: `Task ${i}`,
      goal: `Goal ${i}`,
      areas: ["src"],
    });
    await timed(client, null, "complete_task", {
      task_id: task.task_id,
      status: "success",
      outcome: { summary: `Summary of task ${i}`, achievements: ["one", "two"] },
      changes: checksumChanges(`src/t${i}`, 1),
    });
  }
  for (const suffix of ["", "/export.json", "/export.md"]) {
    const times: number[] = [];
    let bytes = 0;
    for (let i = 0; i < runs; i++) {
      const started = performance.now();
      const response = await fetch(`${String(wf.share_url)}${suffix}`);
      bytes = (await response.arrayBuffer()).byteLength;
      if (!response.ok) throw new Error(`${suffix || "page"} answered ${response.status}`);
      times.push(performance.now() - started);
    }
    const s = summarize(times);
    console.log(
      `${suffix || "page"}: ${tasks} tasks, ${(bytes / 1024).toFixed(0)} KiB, median ${s.median.toFixed(1)} ms, p95 ${s.p95.toFixed(1)} ms (${runs} runs)`,
    );
  }
  await client.close();
} finally {
  await server.stop();
}
