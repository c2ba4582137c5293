#!/usr/bin/env node
// `npm run bench`: every benchmark measured in one run, printed as ONE table and written to
// bench/results/latest.json (BENCHMARKS.md is the committed record). Against floors measured
// in the same run: tool calls vs a GET /health round trip through the same `wrangler dev`,
// the helper vs `git status`. Slowness never fails it; errors do (exit code 1).
//
//   npm run bench [-- --quick]      --quick: 50 calls per tool, 100-task page, 10 live samples,
//                                   helper at 1k/10k files, 10 agents of load
import { execFileSync } from "node:child_process";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { cpus, totalmem } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { browserMissing, launchChromium } from "../test/support/chromium.ts";
import { startDevServer } from "../test/support/dev-server.ts";
import { callTool, checksumChanges, connect, healthRoundTrip, loadAgents, pool, Recorder, summarize, timed } from "./lib/harness.ts";

const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, "..");
const { values } = parseArgs({ options: { quick: { type: "boolean", default: false } } });
const quick = values.quick;
const size = {
  callsPerTool: quick ? 50 : 200,
  pageTasks: quick ? 100 : 500,
  pageGets: quick ? 10 : 30,
  liveSamples: quick ? 10 : 25,
  helperSizes: quick ? "1000,10000" : "1000,10000,100000",
  helperRuns: quick ? "3" : "7",
  loadAgents: quick ? 10 : 50,
  loadWorkflows: quick ? 1 : 2,
};
const log = (message) => process.stderr.write(`${message}\n`);
const rows = [];
const row = (area, measure, value, floor = "", ratio = "") => rows.push({ area, measure, value, floor, ratio });
const ms = (x) => `${x < 10 ? x.toFixed(2) : x.toFixed(1)} ms`;
const pct = (s) => `${ms(s.median)} / ${ms(s.p95)} / ${ms(s.p99)}`;
const x = (a, b) => `${(a / b).toFixed(2)}x`;
const results = { quick, started_at: new Date().toISOString(), machine: machine() };
let failed = false;

function machine() {
  const cpuModel = /model name\s*:\s*(.*)/.exec(readFileSync("/proc/cpuinfo", "utf8"))?.[1] ?? cpus()[0]?.model ?? "unknown";
  return {
    nproc: cpus().length,
    cpu: cpuModel,
    memory_gib: Math.round((totalmem() / 2 ** 30) * 10) / 10,
    node: process.version,
    git: execFileSync("git", ["--version"]).toString().trim(),
    date: new Date().toISOString().slice(0, 10),
  };
}

// ── through wrangler dev ───────────────────────────────────────────────────────
const server = await startDevServer();
try {
  // 1. Per-tool latency with the official SDK v2 client, one call at a time; the floor is a
  //    GET /health round trip through the same server, interleaved so drift hits both.
  log(`tool latency: ${size.callsPerTool} calls per tool`);
  const client = await connect(server);
  const recorder = new Recorder();
  const cycle = async (rec) => {
    const health = await healthRoundTrip(server);
    rec?.add("GET /health (floor)", health);
    const wf = await timed(client, rec, "start_workflow", { name: "Bench", plan: [{ step: "1", goal: "g" }] });
    const task = await timed(client, rec, "start_task", { workflow_id: wf.workflow_id, name: "T", goal: "g", areas: ["src/**"] });
    await timed(client, rec, "log_decision", { task_id: task.task_id, category: "trade_off", question: "q", chosen: "a", reasoning: "r" });
    await timed(client, rec, "log_issue", { task_id: task.task_id, type: "bug_encountered", description: "d", resolution: "r" });
    await timed(client, rec, "log_milestone", { task_id: task.task_id, message: "m", progress: 50 });
    await timed(client, rec, "complete_task", {
      task_id: task.task_id,
      status: "success",
      outcome: { summary: "s" },
      changes: checksumChanges("src/bench", 3),
    });
    await timed(client, rec, "get_workflow", { workflow_id: wf.workflow_id });
    await timed(client, rec, "complete_workflow", { workflow_id: wf.workflow_id, status: "success", summary: "s" });
  };
  for (let i = 0; i < 10; i++) await cycle(null); // warm-up
  for (let i = 0; i < size.callsPerTool; i++) await cycle(recorder);
  const summaries = recorder.summaries();
  const floor = summaries["GET /health (floor)"];
  results.tools = summaries;
  row("tool call (SDK v2, wrangler dev)", `GET /health floor, n=${floor.n}`, pct(floor));
  for (const [tool, s] of Object.entries(summaries)) {
    if (tool !== "GET /health (floor)") row("", `${tool}, n=${s.n}`, pct(s), ms(floor.median), x(s.median, floor.median));
  }

  // 2. Server render of a big workflow's share page.
  log(`page render: ${size.pageTasks} tasks`);
  const wf = await timed(client, null, "start_workflow", { name: "Big page", plan: [{ step: "1", goal: "g" }] });
  const clients = await Promise.all(Array.from({ length: 4 }, () => connect(server)));
  const built = await pool(size.pageTasks, 4, async (i) => {
    const c = clients[i % 4];
    const task = await timed(c, null, "start_task", {
      workflow_id: wf.workflow_id,
      name: `Task ${i}`,
      goal: `Goal ${i}`,
      areas: ["src/**"],
    });
    if (i % 5 === 0) await timed(c, null, "log_milestone", { task_id: task.task_id, message: `Milestone ${i}`, progress: 50 });
    await timed(c, null, "complete_task", {
      task_id: task.task_id,
      status: "success",
      outcome: { summary: `Done ${i}` },
      changes: checksumChanges(`src/t${i}`, 2),
    });
  });
  if (built.some((r) => r.status === "rejected")) throw new Error("building the big workflow failed");
  const shareUrl = String(wf.share_url);
  const timeGet = async (url) => {
    const t0 = performance.now();
    const response = await fetch(url);
    const bytes = (await response.arrayBuffer()).byteLength;
    if (!response.ok) throw new Error(`${url} answered ${response.status}`);
    return { ms: performance.now() - t0, bytes };
  };
  await timeGet(shareUrl);
  const page = [];
  const json = [];
  const health = [];
  let pageBytes = 0;
  for (let i = 0; i < size.pageGets; i++) {
    health.push(await healthRoundTrip(server));
    const p = await timeGet(shareUrl);
    page.push(p.ms);
    pageBytes = p.bytes;
    json.push((await timeGet(`${shareUrl}/export.json`)).ms);
  }
  results.page = {
    tasks: size.pageTasks,
    bytes: pageBytes,
    html: summarize(page),
    export_json: summarize(json),
    health: summarize(health),
  };
  const h = summarize(health);
  row(
    `share page, ${size.pageTasks} tasks`,
    `GET /s/:token (${Math.round(pageBytes / 1024)} KB HTML), n=${page.length}`,
    pct(summarize(page)),
    ms(h.median),
    x(summarize(page).median, h.median),
  );
  row("", `GET /s/:token/export.json, n=${json.length}`, pct(summarize(json)), ms(h.median), x(summarize(json).median, h.median));

  // 3. Live update: from sending log_milestone to its text in the page's DOM, in Chromium.
  if (browserMissing) {
    row("live update (Chromium)", "skipped: no /usr/bin/chromium", "");
  } else {
    log(`live update: ${size.liveSamples} samples`);
    const browser = await launchChromium();
    try {
      const live = await timed(client, null, "start_workflow", { name: "Live" });
      const task = await timed(client, null, "start_task", { workflow_id: live.workflow_id, name: "Live task", goal: "g" });
      const tab = await browser.newPage();
      await tab.goto(String(live.share_url));
      await tab.waitForFunction(() => document.getElementById("wm")?.dataset.state === "live");
      const samples = [];
      for (let i = 0; i < size.liveSamples + 2; i++) {
        const message = `live-sample-${i}-${Math.random().toString(36).slice(2, 8)}`;
        // The observer is installed before the call is sent: CDP runs evaluations in order, so once
        // the second one returns, the first has set up its observer.
        const seen = tab.evaluate(
          (text) =>
            new Promise((resolve) => {
              const has = () => document.body.textContent?.includes(text);
              if (has()) return resolve(true);
              const observer = new MutationObserver(() => {
                if (has()) {
                  observer.disconnect();
                  resolve(true);
                }
              });
              observer.observe(document.body, { childList: true, subtree: true, characterData: true });
            }),
          message,
        );
        await tab.evaluate(() => 0);
        const t0 = performance.now();
        const sent = await callTool(client, "log_milestone", { task_id: task.task_id, message });
        if (sent.isError) throw new Error(sent.text);
        await seen;
        if (i >= 2) samples.push(performance.now() - t0); // the first two warm up
      }
      const s = summarize(samples);
      results.live = s;
      row(
        "live update (Chromium)",
        `log_milestone sent → text in DOM, n=${s.n}`,
        `${ms(s.median)} / ${ms(s.p95)} (median / p95)`,
        ms(summaries.log_milestone.median),
        x(s.median, summaries.log_milestone.median),
      );
    } finally {
      await browser.close();
    }
  }

  // 4. Load: concurrent agents with whole workflows (bench/load.mjs has the writers-on-one-workflow run too).
  log(`load: ${size.loadAgents} agents × ${size.loadWorkflows} workflows`);
  const load = await loadAgents(server, { agents: size.loadAgents, workflows: size.loadWorkflows, tasks: 3 });
  results.load = load;
  if (load.errors.length || load.problems.length) failed = true;
  row(
    `load, ${size.loadAgents} concurrent agents`,
    `${load.calls} calls, ${(load.calls / load.seconds).toFixed(0)} calls/s, errors ${load.errors.length}, inconsistent ${load.problems.length}`,
    pct(load.latency),
    ms(floor.median),
    x(load.latency.median, floor.median),
  );
} finally {
  await server.stop();
}

// ── the helper vs git, and the edge's per-task work (no server running) ─────────
log("helper: building client-helper and running bench/helper.mjs");
execFileSync(process.execPath, [join(root, "client-helper", "build.mjs")], { cwd: root, stdio: "inherit" });
mkdirSync(join(here, "results"), { recursive: true });
const helperJson = join(here, "results", "helper.json");
execFileSync(process.execPath, [join(here, "helper.mjs"), "--sizes", size.helperSizes, "--runs", size.helperRuns, "--json", helperJson], {
  stdio: ["ignore", "ignore", "inherit"],
});
const helper = JSON.parse(readFileSync(helperJson, "utf8"));
results.helper = helper;
for (const [i, r] of helper.results.entries()) {
  const label = i === 0 ? `helper (git ${helper.git.replace("git version ", "")}), 1% changed` : "";
  row(label, `snapshot, ${r.files.toLocaleString("en")} files`, ms(r.snapshot_ms), ms(r.floor_ms), x(r.snapshot_ms, r.floor_ms));
  row("", `changes, ${r.files.toLocaleString("en")} files`, ms(r.changes_ms), ms(r.floor_ms), x(r.changes_ms, r.floor_ms));
}

log("domain: running bench/domain.mjs");
const domainOut = execFileSync(process.execPath, [join(here, "domain.mjs"), "1000", "10000", "50000"]).toString();
const domain = [];
for (const line of domainOut.split("\n").slice(1)) {
  const cells = line.trim().split(/\s+/).map(Number);
  if (cells.length === 6 && cells.every(Number.isFinite)) {
    const [entries, net, summary, scope, total, changed] = cells;
    domain.push({ entries, net_ms: net, summary_ms: summary, scope_ms: scope, total_ms: total, changed });
  }
}
results.domain = domain;
for (const [i, d] of domain.entries()) {
  row(
    i === 0 ? "edge: union + dedup + scope" : "",
    `${d.entries.toLocaleString("en")} change entries`,
    ms(d.total_ms),
    "",
    `net ${d.net_ms} + summary ${d.summary_ms} + scope ${d.scope_ms} ms`,
  );
}

// ── the table ────────────────────────────────────────────────────────────────
const m = results.machine;
const headers = ["area", "measure", "value (median / p95 / p99)", "floor", "ratio"];
const table = [headers, ...rows.map((r) => [r.area, r.measure, r.value, r.floor, r.ratio])];
const widths = headers.map((_, c) => Math.max(...table.map((t) => String(t[c]).length)));
const line = (cells) => `| ${cells.map((c, i) => String(c).padEnd(widths[i])).join(" | ")} |`;
console.log(`Waymark bench${quick ? " (--quick)" : ""}, ${m.date}: ${m.nproc} × ${m.cpu}, ${m.memory_gib} GiB, Node ${m.node}, ${m.git}`);
console.log(line(headers));
console.log(`|${widths.map((w) => "-".repeat(w + 2)).join("|")}|`);
for (const t of table.slice(1)) console.log(line(t));
results.table = rows;
writeFileSync(join(here, "results", "latest.json"), `${JSON.stringify(results, null, 2)}\n`);
log("wrote bench/results/latest.json");
process.exitCode = failed ? 1 : 0;
