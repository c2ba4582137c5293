/**
 * Bounded load through a real `wrangler dev` on 127.0.0.1 (the full-size run is bench/load.ts,
 * with the same two shapes): concurrent agents with whole workflows, and concurrent writers on
 * one workflow. No call may fail, and everything acknowledged must be read back with a
 * gap-free event log. Slowness never fails it; only errors and inconsistencies do.
 */
import { existsSync, readdirSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadAgents, loadWriters } from "../support/agents";
import { type DevServer, startDevServer } from "../support/dev-server";
import type { Summary } from "../support/stats";

let server: DevServer;

beforeAll(async () => {
  server = await startDevServer();
});
afterAll(async () => {
  await server?.stop();
});

const fmt = (s: Summary) => `n=${s.n} median ${s.median.toFixed(1)} ms, p95 ${s.p95.toFixed(1)} ms, p99 ${s.p99.toFixed(1)} ms`;

describe("load through wrangler dev", () => {
  it("10 concurrent agents run whole workflows without an error", async () => {
    const result = await loadAgents(server, { agents: 10, workflows: 1, tasks: 2 });
    console.log(`10 agents: ${fmt(result.latency)}`);
    expect(result.errors).toEqual([]);
    expect(result.problems).toEqual([]);
    expect(result.calls).toBe(10 * (3 + 6 * 2));
  });

  it("8 concurrent writers on one workflow: every acknowledged write is there, events gap-free", async () => {
    const result = await loadWriters(server, { writers: 8, writes: 6 });
    console.log(`8 writers on one workflow: ${fmt(result.latency)}, ${result.events} events`);
    expect(result.errors).toEqual([]);
    expect(result.problems).toEqual([]);
    expect(result.calls).toBe(8 * (6 + 2));
  });
});

// How the throughput benches run wrangler (bench/lib/load-server.ts): the same calls must hold with
// the data directory on tmpfs and wrangler's per-request log line off, and the data must be there.
describe.runIf(existsSync("/dev/shm"))("load through wrangler dev with its data on tmpfs and no request log", () => {
  it("agents' writes land in a data directory on /dev/shm, no request line is printed, and stop() removes it", async () => {
    const dataDirs = () => new Set(readdirSync("/dev/shm").filter((name) => name.startsWith("waymark-dev-")));
    const before = dataDirs();
    const inMemory = await startDevServer({ dataInMemory: true, logLevel: "warn" });
    let ours: string[] = [];
    try {
      ours = [...dataDirs()].filter((name) => !before.has(name));
      expect(ours).toHaveLength(1);
      const result = await loadAgents(inMemory, { agents: 4, workflows: 1, tasks: 1 });
      expect(result.errors).toEqual([]);
      expect(result.problems).toEqual([]);
      const objects = readdirSync(`/dev/shm/${ours[0]}/v3/do`, { recursive: true }).map(String);
      expect(
        objects.filter((name) => name.startsWith("waymark-WorkflowObject/") && name.endsWith(".sqlite")).length,
      ).toBeGreaterThanOrEqual(4);
      // At the default level wrangler prints "POST /mcp 200 OK (…ms)" for every request.
      expect(inMemory.output()).not.toMatch(/POST \/mcp/);
    } finally {
      await inMemory.stop();
    }
    expect(ours.filter((name) => existsSync(`/dev/shm/${name}`))).toEqual([]);
  });
});
