/**
 * Fuzz: ≥ 10,000 malformed and hostile requests from a seed against a fresh `wrangler dev` on
 * 127.0.0.1 with two accounts. Every answer must be a clear refusal (4xx JSON, JSON-RPC error,
 * or a tool error with a stable code), never a 5xx or a dropped connection, and a refused
 * request must store nothing. Bounded by --count and --max-seconds; stops by itself.
 *
 *   npx node bench/fuzz.ts [--seed 1] [--count 10000] [--concurrency 4] [--max-seconds 600] [--json out.json]
 */
import { writeFileSync } from "node:fs";
import { parseArgs } from "node:util";
import { startDevServer } from "../test/support/dev-server.ts";
import { runFuzz, setupTarget } from "../test/support/fuzz.ts";
import { prng } from "../test/support/stats.ts";

const { values } = parseArgs({
  options: {
    seed: { type: "string", default: "1" },
    count: { type: "string", default: "10000" },
    concurrency: { type: "string", default: "4" },
    "max-seconds": { type: "string", default: "600" },
    json: { type: "string" },
  },
});
const seed = Number(values.seed);
const count = Number(values.count);
const tokens = { acme: "token-acme-0123456789", globex: "token-globex-0123456789" };
const server = await startDevServer({ vars: { WAYMARK_TOKENS: `acme:${tokens.acme},globex:${tokens.globex}` } });
let report: Awaited<ReturnType<typeof runFuzz>>;
try {
  const target = await setupTarget(server.url, tokens.acme, tokens.globex);
  report = await runFuzz(
    target,
    {
      seed,
      count,
      concurrency: Number(values.concurrency),
      maxSeconds: Number(values["max-seconds"]),
      onProgress: (done) => process.stderr.write(`\r${done}/${count}`),
    },
    prng(seed),
  );
  process.stderr.write("\n");
} finally {
  await server.stop();
}
console.log(`fuzz: seed ${report.seed}, ${report.requests} requests in ${report.seconds.toFixed(1)} s`);
for (const [kind, n] of Object.entries(report.kinds).sort((a, b) => b[1] - a[1])) console.log(`  ${kind.padEnd(36)} ${n}`);
console.log(`failures: ${report.failures.length}; problems: ${report.problems.length}`);
for (const f of report.failures.slice(0, 20))
  console.log(`  #${f.index} ${f.label}: ${f.verdict.kind} ${f.verdict.status} ${f.verdict.detail}`);
for (const p of report.problems) console.log(`  ${p}`);
if (values.json) writeFileSync(values.json, `${JSON.stringify(report, null, 2)}\n`);
process.exitCode = report.failures.length + report.problems.length > 0 ? 1 : 0;
