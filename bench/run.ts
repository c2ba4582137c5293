/**
 * `npm run bench`: every benchmark measured in one run, printed as ONE table (Markdown) and
 * written to bench/results/latest.json (BENCHMARKS.md is the committed record). Each figure
 * sits beside the floor it is compared with, measured in the same run, and the target it is
 * held to. Everything targets servers on 127.0.0.1 that the bench starts itself; every loop is
 * bounded in count and time. Slowness never fails it; errors and inconsistencies do (exit 1).
 *
 *   npm run bench [-- --quick] [-- --only tools,live,growth,load,cost-ab,floor,price,quota,migration,team,helper-calls,helper-tasks,hooks,pages,edge,checksum,helper,blame,merges,insights,suite]
 *                 [-- --old-ref <git ref>] [-- --against-floor] [-- --server-var NAME=value ...]
 *
 * --quick: smaller sizes (each row says so where the size differs), about 3 minutes.
 * suite: runs `npm test` for its wall time only when named in --only (it takes minutes); any
 * other run reports the last recorded one, with its date and commit (bench/sections/suite.ts).
 * --old-ref: the build the load and own-cost A/Bs compare with (default: 6413a27, main when this bench
 * was written). --against-floor: cost-ab's other side is bench/floor-worker instead of the old build
 * (the least an MCP write costs, in the same turns). --server-var: a binding for this build's server (repeatable).
 */
import { execFileSync } from "node:child_process";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { cpus, totalmem } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { type DevServer, startDevServer } from "../test/support/dev-server.ts";
import type { BenchContext } from "./lib/context.ts";
import { Table } from "./lib/table.ts";
import { blameBench } from "./sections/blame.ts";
import { costAB } from "./sections/cost-ab.ts";
import { edge } from "./sections/edge.ts";
import { floor } from "./sections/floor.ts";
import { growth } from "./sections/growth.ts";
import { buildHelper, checksumSnapshot, gitSnapshots, helperCalls } from "./sections/helper.ts";
import { helperTasks } from "./sections/helper-tasks.ts";
import { hookCosts } from "./sections/hooks.ts";
import { insightsBench } from "./sections/insights.ts";
import { liveUpdate } from "./sections/live.ts";
import { loadAB } from "./sections/load.ts";
import { mergeMatrix } from "./sections/merges.ts";
import { migration } from "./sections/migration.ts";
import { pagesUnderLoad } from "./sections/pages.ts";
import { price } from "./sections/price.ts";
import { quota } from "./sections/quota.ts";
import { suiteWallTime } from "./sections/suite.ts";
import { team } from "./sections/team.ts";
import { toolLatency } from "./sections/tools.ts";

const SECTIONS = [
  "tools",
  "live",
  "growth",
  "load",
  "cost-ab",
  "floor",
  "price",
  "quota",
  "migration",
  "team",
  "helper-calls",
  "helper-tasks",
  "hooks",
  "pages",
  "edge",
  "checksum",
  "helper",
  "blame",
  "merges",
  "insights",
  "suite",
] as const;
/** The sections measured through this build's `wrangler dev`. */
const THROUGH_DEV_SERVER: readonly Section[] = ["tools", "live", "growth", "load", "helper-calls", "helper-tasks", "hooks", "merges"];
type Section = (typeof SECTIONS)[number];

const { values } = parseArgs({
  options: {
    quick: { type: "boolean", default: false },
    only: { type: "string" },
    "old-ref": { type: "string", default: "6413a27" },
    "against-floor": { type: "boolean", default: false },
    "server-var": { type: "string", multiple: true, default: [] },
  },
});
// NAME=value bindings for this build's server (e.g. to raise per-account quotas for a long run).
const serverVars: Record<string, string> = {};
for (const binding of values["server-var"]) {
  const at = binding.indexOf("=");
  if (at < 1) {
    console.error(`--server-var takes NAME=value, got ${binding}`);
    process.exit(2);
  }
  serverVars[binding.slice(0, at)] = binding.slice(at + 1);
}
const only = values.only?.split(",").map((s) => s.trim()) ?? SECTIONS.filter((s) => s !== "suite");
const unknown = only.filter((s) => !(SECTIONS as readonly string[]).includes(s));
if (unknown.length > 0) {
  console.error(`unknown section(s) ${unknown.join(", ")}; sections: ${SECTIONS.join(", ")}`);
  process.exit(2);
}
const wanted = (section: Section) => only.includes(section);

const resultsDir = join(import.meta.dirname, "results");
mkdirSync(resultsDir, { recursive: true });
const problems: string[] = [];
const table = new Table();
const context: BenchContext = {
  quick: values.quick,
  table,
  results: { quick: values.quick, sections: only, started_at: new Date().toISOString(), machine: machine() },
  log: (message) => process.stderr.write(`[${new Date().toISOString().slice(11, 19)}] ${message}\n`),
  fail: (problem) => {
    problems.push(problem);
    process.stderr.write(`PROBLEM: ${problem}\n`);
  },
};

function machine() {
  const cpuModel = /model name\s*:\s*(.*)/.exec(readFileSync("/proc/cpuinfo", "utf8"))?.[1] ?? cpus()[0]?.model ?? "unknown";
  return {
    nproc: cpus().length,
    cpu: cpuModel,
    memory_gib: Math.round((totalmem() / 2 ** 30) * 10) / 10,
    node: process.version,
    git: execFileSync("git", ["--version"]).toString().trim(),
    commit: execFileSync("git", ["rev-parse", "--short", "HEAD"], { cwd: import.meta.dirname })
      .toString()
      .trim(),
    date: new Date().toISOString().slice(0, 10),
  };
}

/** Runs one section; an exception is recorded as a problem and the other sections still run. */
async function section(name: Section, run: () => Promise<void> | void): Promise<void> {
  if (!wanted(name)) return;
  try {
    await run();
  } catch (error) {
    context.fail(`${name}: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
    table.add({ area: name, measure: "failed (see stderr)", value: "" });
  }
}

const started = performance.now();
if (["helper-calls", "helper-tasks", "checksum", "helper", "blame", "merges"].some((s) => wanted(s as Section))) buildHelper(context);

// Through wrangler dev (this build).
if (THROUGH_DEV_SERVER.some(wanted)) {
  const server: DevServer = await startDevServer({ vars: serverVars });
  try {
    let logMilestoneMedian = Number.NaN;
    await section("tools", async () => {
      logMilestoneMedian = (await toolLatency(context, server)).log_milestone?.median ?? Number.NaN;
    });
    await section("live", () => liveUpdate(context, server, logMilestoneMedian));
    await section("growth", () => growth(context, server));
    await section("load", () => loadAB(context, serverVars, values["old-ref"]));
    await section("helper-calls", () => helperCalls(context, server));
    await section("helper-tasks", () => helperTasks(context, server));
    await section("hooks", () => hookCosts(context, server));
    await section("merges", () => mergeMatrix(context, server));
  } finally {
    await server.stop();
  }
}

// Its own two servers: this build and the old one (or the floor Worker), side by side with empty data.
await section("cost-ab", () => costAB(context, serverVars, values["against-floor"] ? "floor" : values["old-ref"]));
// Its own two servers: this build and the platform's floor Worker (bench/floor-worker), taking turns.
await section("floor", () => floor(context, serverVars));
// Its own metered servers (this build and the old one): one agent session each, priced.
await section("price", () => price(context, serverVars, values["old-ref"]));
// Its own metered server: a workflow filled to its byte quota, then completed and read.
await section("quota", () => quota(context, serverVars));
// Its own two servers on one data directory: workflows filled by the build before the last
// workflow migration, then each one's first request on this build (the migration inside it).
await section("migration", () => migration(context, serverVars));
// Its own metered server: one account, many agents, for a set time.
await section("team", () => team(context, serverVars));

// Its own server: the readers' rate-limit budgets are this section's alone.
await section("pages", () => pagesUnderLoad(context));

// Its own server: an account of 10,000 tasks that no other section should read or write.
await section("insights", () => insightsBench(context, serverVars));

// No server running: the edge's pure functions and the helper against git and the file system.
await section("edge", () => edge(context));
await section("checksum", () => checksumSnapshot(context));
await section("helper", () => gitSnapshots(context, resultsDir));
await section("blame", () => blameBench(context));
// Last: `npm test` starts servers of its own and keeps both cores busy for minutes.
if (wanted("suite")) await section("suite", () => suiteWallTime(context, resultsDir, true));
else suiteWallTime(context, resultsDir, false);

const m = context.results.machine as ReturnType<typeof machine>;
const minutes = (performance.now() - started) / 60_000;
console.log(
  `Waymark bench${values.quick ? " (--quick)" : ""} at ${m.commit}, ${m.date}: ${m.nproc} × ${m.cpu}, ${m.memory_gib} GiB, Node ${m.node}, ${m.git}; ${minutes.toFixed(1)} min`,
);
console.log(table.render());
for (const problem of problems) console.log(`PROBLEM: ${problem.split("\n")[0]}`);
context.results.table = table.rows;
context.results.problems = problems;
context.results.minutes = minutes;
writeFileSync(join(resultsDir, "latest.json"), `${JSON.stringify(context.results, null, 2)}\n`);
context.log("wrote bench/results/latest.json");
process.exitCode = problems.length > 0 ? 1 : 0;
