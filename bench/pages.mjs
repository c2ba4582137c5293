// Server render time of a shared workflow page, measured against a real `wrangler dev`.
// Usage: npx node bench/pages.mjs [tasks=500] [runs=20]   (Node 22 runs the TypeScript helper directly)

import { toolCaller } from "../test/pages/fixture.ts";
import { startDevServer } from "../test/support/dev-server.ts";

const tasks = Number(process.argv[2] ?? 500);
const runs = Number(process.argv[3] ?? 20);
const server = await startDevServer();
try {
  const call = toolCaller(fetch, `${server.url}/mcp`, server.token);
  const wf = await call("start_workflow", { name: `Bench ${tasks} tasks`, plan: [{ step: "1", goal: "many tasks" }] });
  for (let i = 0; i < tasks; i++) {
    const task = await call("start_task", { workflow_id: wf.workflow_id, name: `Task ${i}`, goal: `Goal ${i}`, areas: ["src"] });
    await call("complete_task", {
      task_id: task.task_id,
      status: "success",
      outcome: { summary: `Summary of task ${i}`, achievements: ["one", "two"] },
      changes: {
        type: "checksum",
        transitions: [{ path: `src/file-${i}.ts`, before: null, after: { mode: "100644", blob: "a".repeat(40) } }],
      },
    });
  }
  const measure = async (suffix) => {
    const times = [];
    let bytes = 0;
    for (let i = 0; i < runs; i++) {
      const started = performance.now();
      const body = await (await fetch(`${wf.share_url}${suffix}`)).arrayBuffer();
      times.push(performance.now() - started);
      bytes = body.byteLength;
    }
    times.sort((a, b) => a - b);
    const at = (q) => times[Math.min(times.length - 1, Math.floor(q * times.length))].toFixed(1);
    console.log(
      `${suffix || "page"}: ${tasks} tasks, ${(bytes / 1024).toFixed(0)} KiB, median ${at(0.5)} ms, p95 ${at(0.95)} ms (${runs} runs, full HTTP round trip)`,
    );
  };
  await measure("");
  await measure("/export.json");
  await measure("/export.md");
} finally {
  await server.stop();
}
