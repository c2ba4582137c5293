import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { createServer, request, type Server } from "node:http";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { type DevServer, freePort } from "../support/dev-server";
import { sharedDevServer } from "../support/shared-server";

/**
 * The official MCP conformance suite against `wrangler dev`. The suite cannot send headers, so a
 * loopback proxy adds the bearer token and passes everything else through, Host included (the
 * DNS-rebinding scenario sends a foreign Host). Expected failures, each with its reason, are in
 * conformance-baseline.yml; the suite itself fails the run on a regression or a stale entry.
 */
const REPO_ROOT = resolve(import.meta.dirname, "../..");
const BASELINE = join(REPO_ROOT, "test/e2e/conformance-baseline.yml");

let server: DevServer;
let proxy: Server;
let proxyUrl: string;

beforeAll(async () => {
  server = sharedDevServer();
  const target = new URL(server.url);
  proxy = createServer((incoming, outgoing) => {
    const headers = { ...incoming.headers, authorization: incoming.headers.authorization ?? `Bearer ${server.token}` };
    const upstream = request(
      { host: target.hostname, port: target.port, method: incoming.method, path: incoming.url, headers },
      (answer) => {
        outgoing.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(outgoing);
      },
    );
    upstream.on("error", (error) => outgoing.writeHead(502).end(String(error)));
    incoming.pipe(upstream);
  });
  const port = await freePort();
  await new Promise<void>((ready) => proxy.listen(port, "127.0.0.1", ready));
  proxyUrl = `http://127.0.0.1:${port}/mcp`;
});

afterAll(async () => {
  await new Promise((closed) => proxy?.close(closed));
});

it("passes the official MCP conformance suite except the baseline's scenarios", async () => {
  const output = mkdtempSync(join(tmpdir(), "waymark-conformance-"));
  try {
    const run = spawn("npx", ["conformance", "server", "--url", proxyUrl, "--expected-failures", BASELINE, "-o", output], {
      cwd: REPO_ROOT,
      env: { ...process.env, NO_COLOR: "1" },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let log = "";
    run.stdout.on("data", (chunk: Buffer) => {
      log += chunk.toString();
    });
    run.stderr.on("data", (chunk: Buffer) => {
      log += chunk.toString();
    });
    const code = await new Promise<number | null>((done) => run.on("exit", done));
    const summary = log.slice(log.lastIndexOf("=== SUMMARY ==="));
    expect(code, summary || log.slice(-4000)).toBe(0);
    expect(summary).toMatch(/✓ server-initialize: [1-9]\d* passed, 0 failed/);
    expect(summary).toMatch(/✓ tools-list: [1-9]\d* passed, 0 failed/);
    expect(summary).toMatch(/✓ resources-list: [1-9]\d* passed, 0 failed/);
    expect(summary).toMatch(/✓ prompts-list: [1-9]\d* passed, 0 failed/);
  } finally {
    rmSync(output, { recursive: true, force: true });
  }
}, 300_000);
