import { env } from "cloudflare:test";
import { it } from "vitest";
import type { InsightTaskFact } from "../../src/domain/insight-facts";
import { workflowSummary } from "./fixtures";

const DAY = 86_400_000;
const at = (day: number, minutes = 0) => new Date(Date.UTC(2026, 9, 1) + day * DAY + minutes * 60_000).toISOString();
for (const groups of [20, 200]) {
  it(`timing ${groups} groups × 365 days`, async () => {
    const name = `timing-${groups}`;
    const stub = env.ACCOUNT.get(env.ACCOUNT.idFromName(name));
    const n = groups * 365;
    const facts: InsightTaskFact[] = Array.from({ length: n }, (_, i) => ({
      task_id: `tk_${String(i).padStart(20, "a")}_aaaaaaaa`, workflow_id: "wf_t", completed_at: at(Math.floor(i / groups) - 300, i % 60),
      agent: "claude-code", model: `m-${i % groups}`, repository: { fingerprint: "a".repeat(64), remote: "r" }, status: "success", files: "signed",
      tests: "passed", outside_areas: false, areas_declared: true, lines: { agent: 8, others: 2, not_observed: 0 }, usage: { cost_usd: 0.5, tokens: 1000, kind: "signed" },
    }));
    const t0 = performance.now();
    for (let f = 0; f < n; f += 500) await stub.recordWorkflow(name, workflowSummary("wf_t", "t"), { insights: { tasks: facts.slice(f, f + 500) } });
    const t1 = performance.now();
    const req = { from: at(-300).slice(0, 10), to: at(64).slice(0, 10), by: ["agent", "model", "repository"] as const, filters: {}, trend: "tests_passed" as const, compare: null };
    const times: number[] = [];
    for (let i = 0; i < 7; i++) { const s = performance.now(); await stub.insights({ ...req, by: [...req.by] }); times.push(performance.now() - s); }
    times.sort((a, b) => a - b);
    console.log(`TIMING groups=${groups} tasks=${n} rows=${n} push_ms_per_task=${((t1 - t0) / n).toFixed(3)} read_ms median=${times[3]?.toFixed(1)} min=${times[0]?.toFixed(1)} max=${times[6]?.toFixed(1)}`);
  }, 600_000);
}
