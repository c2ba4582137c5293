/**
 * 1,000 malformed and hostile requests from a fixed seed against a real `wrangler dev` on
 * 127.0.0.1 with two accounts (the full 10,000 is bench/fuzz.ts). To reproduce a failure:
 * npx node bench/fuzz.ts --seed 20261122 --count 1000.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type DevServer, startDevServer } from "../support/dev-server";
import { runFuzz, setupTarget } from "../support/fuzz";
import { prng } from "../support/stats";

const SEED = 20261122;
const TOKENS = { acme: "token-acme-0123456789", globex: "token-globex-0123456789" };
let server: DevServer;

beforeAll(async () => {
  server = await startDevServer({ vars: { WAYMARK_TOKENS: `acme:${TOKENS.acme},globex:${TOKENS.globex}` } });
});
afterAll(async () => {
  await server?.stop();
});

describe("fuzz through wrangler dev", () => {
  it("answers every bad request with a clear error, no 5xx, and stores nothing from a refused one", async () => {
    const target = await setupTarget(server.url, TOKENS.acme, TOKENS.globex);
    const report = await runFuzz(target, { seed: SEED, count: 1000, concurrency: 4, maxSeconds: 50 }, prng(SEED));
    console.log(`fuzz seed ${SEED}: ${report.requests} requests in ${report.seconds.toFixed(1)} s`, report.kinds);
    expect(report.failures.slice(0, 10)).toEqual([]);
    expect(report.problems).toEqual([]);
    expect(report.requests).toBe(1000);
    // The run reached every kind of refusal, not just one.
    for (const kind of ["http-4xx", "jsonrpc-error", "tool-error:INPUT_VALIDATION_ERROR", "tool-error:NOT_FOUND", "tool-error:CONFLICT"]) {
      expect(report.kinds[kind] ?? 0, kind).toBeGreaterThan(0);
    }
  });
});
