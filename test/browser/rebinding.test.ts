import { type ChildProcess, spawn } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from "node:fs";
import { request } from "node:http";
import { tmpdir } from "node:os";
import { delimiter, join, resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type DevServer, freePort } from "../support/dev-server";
import { sharedDevServer } from "../support/shared-server";

/**
 * DNS rebinding against `npm start`, over real sockets: a page on attacker.example whose
 * name now resolves to 127.0.0.1 sends requests with `Host: attacker.example:<port>` and
 * `Origin: http://attacker.example:<port>`. The server must refuse them, and the token it
 * would need is no longer a published default.
 */
type Answer = { status: number; body: string };

function raw(url: string, path: string, headers: Record<string, string>, method = "GET", body = ""): Promise<Answer> {
  const { port } = new URL(url);
  return new Promise((resolveAnswer, reject) => {
    const req = request({ host: "127.0.0.1", port, path, method, headers }, (res) => {
      let text = "";
      res.on("data", (chunk) => {
        text += chunk;
      });
      res.on("end", () => resolveAnswer({ status: res.statusCode ?? 0, body: text }));
    });
    req.on("error", reject);
    req.end(body);
  });
}

const LIST = JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" });

describe("DNS rebinding against the development server", () => {
  let server: DevServer;
  let port: string;
  beforeAll(() => {
    server = sharedDevServer();
    port = new URL(server.url).port;
  });

  const mcp = (headers: Record<string, string>) =>
    raw(
      server.url,
      "/mcp",
      {
        Authorization: `Bearer ${server.token}`,
        "Content-Type": "application/json",
        Accept: "application/json, text/event-stream",
        ...headers,
      },
      "POST",
      LIST,
    );

  it.each([
    ["attacker.example", 403],
    ["attacker.example:PORT", 403],
    ["localhost.:PORT", 403],
    ["127.0.0.1.nip.io:PORT", 403],
    ["127.0.0.1:PORT", 200],
    ["localhost:PORT", 200],
    ["[::1]:PORT", 200],
  ])("Host %s → %i on /mcp, even with the right token", async (host, status) => {
    const answer = await mcp({ Host: host.replace("PORT", port) });
    expect(answer.status).toBe(status);
    if (status === 403) {
      // MCP clients read a JSON-RPC error.
      expect(JSON.parse(answer.body)).toEqual({
        jsonrpc: "2.0",
        error: { code: -32000, message: "FORBIDDEN: Host: not a host name this server answers to" },
        id: null,
      });
    }
  });

  it.each(["/health", "/dashboard", "/login", "/s/sh_aaaaaaaaaaaaaaaaaaaa_bbbbbbbb_cccccccccccccccccccccccccc", "/api/webhooks"])(
    "a foreign Host is refused on %s too",
    async (path) => {
      expect((await raw(server.url, path, { Host: `attacker.example:${port}` })).status).toBe(403);
    },
  );

  it("an allowed Host with the attacker's Origin is refused (compared with configured origins, not the Host)", async () => {
    expect((await mcp({ Host: `127.0.0.1:${port}`, Origin: `http://attacker.example:${port}` })).status).toBe(403);
    expect((await mcp({ Host: `127.0.0.1:${port}`, Origin: `http://127.0.0.1:${port}` })).status).toBe(200);
  });

  it("the old published default token opens nothing", async () => {
    const answer = await raw(
      server.url,
      "/mcp",
      {
        Host: `127.0.0.1:${port}`,
        Authorization: "Bearer waymark-dev-token",
        "Content-Type": "application/json",
        Accept: "application/json, text/event-stream",
      },
      "POST",
      LIST,
    );
    expect(answer.status).toBe(401);
  });
});

describe("npm start's development token", () => {
  const root = resolve(import.meta.dirname, "../..");
  let stateDir: string;
  beforeAll(() => {
    stateDir = mkdtempSync(join(tmpdir(), "waymark-start-"));
  });
  afterAll(() => rmSync(stateDir, { recursive: true, force: true }));

  /** Runs `npm start` until /health answers; returns the token it printed. */
  async function npmStart(): Promise<{ token: string; url: string; stop: () => Promise<void> }> {
    const port = await freePort();
    const inspector = await freePort();
    let output = "";
    const child: ChildProcess = spawn(
      "npm",
      ["start", "--", "--port", String(port), "--inspector-port", String(inspector), "--show-interactive-dev-session=false"],
      {
        cwd: root,
        detached: true,
        stdio: ["ignore", "pipe", "pipe"],
        env: {
          ...process.env,
          PATH: `${join(root, "node_modules", ".bin")}${delimiter}${process.env.PATH ?? ""}`,
          WAYMARK_STATE_DIR: stateDir,
          WAYMARK_DEV_TOKEN: "",
          CI: "true",
          NO_COLOR: "1",
        },
      },
    );
    child.stdout?.on("data", (d) => {
      output += d;
    });
    child.stderr?.on("data", (d) => {
      output += d;
    });
    const stop = async () => {
      const exited = new Promise((r) => child.once("exit", r));
      try {
        process.kill(-(child.pid as number), "SIGTERM");
      } catch {
        return;
      }
      const timer = setTimeout(() => {
        try {
          process.kill(-(child.pid as number), "SIGKILL");
        } catch {
          // gone
        }
      }, 5000);
      await exited;
      clearTimeout(timer);
    };
    const url = `http://127.0.0.1:${port}`;
    const deadline = Date.now() + 90_000;
    while (Date.now() < deadline) {
      try {
        if ((await fetch(`${url}/health`, { signal: AbortSignal.timeout(2000) })).ok) break;
      } catch {
        // not yet
      }
      await new Promise((r) => setTimeout(r, 250));
    }
    const token = /Waymark dev token: (\S+)/.exec(output)?.[1];
    if (!token) {
      await stop();
      throw new Error(`npm start printed no token:\n${output.slice(-3000)}`);
    }
    return { token, url, stop };
  }

  it("is random, printed, stored for the user only and reused on the next start", async () => {
    const first = await npmStart();
    try {
      expect(first.token).toMatch(/^[A-Za-z0-9_-]{43}$/);
      const file = join(stateDir, "dev-token");
      expect(readFileSync(file, "utf8")).toBe(first.token);
      expect(statSync(file).mode & 0o777).toBe(0o600);
      const call = (token: string) =>
        fetch(`${first.url}/mcp`, {
          method: "POST",
          headers: { Authorization: `Bearer ${token}`, "Content-Type": "application/json", Accept: "application/json, text/event-stream" },
          body: LIST,
        });
      expect((await call(first.token)).status).toBe(200);
      expect((await call("waymark-dev-token")).status).toBe(401);
    } finally {
      await first.stop();
    }
    const second = await npmStart();
    await second.stop();
    expect(second.token).toBe(first.token);
  }, 240_000);

  // wrangler dev serves its Local Explorer on the same port, ahead of the Worker: its API runs
  // SQL on any Durable Object without a token, and its trace capture stores every request URL.
  it("does not expose wrangler's Local Explorer: no SQL on workflow storage, no stored request URLs", async () => {
    const server = await npmStart();
    try {
      const call = async (name: string, args: Record<string, unknown>) => {
        const response = await fetch(`${server.url}/mcp`, {
          method: "POST",
          headers: {
            Authorization: `Bearer ${server.token}`,
            "Content-Type": "application/json",
            Accept: "application/json, text/event-stream",
          },
          body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name, arguments: args } }),
        });
        // The SDK answers a single request as one Server-Sent Event.
        const data = /^data: (.*)$/m.exec(await response.text())?.[1] ?? "null";
        return (JSON.parse(data) as { result: { structuredContent: Record<string, unknown> } }).result.structuredContent;
      };
      const started = await call("start_workflow", { name: "Explorer probe" });
      const workflowId = String(started.workflow_id);
      const shareToken = String(started.share_url).split("/").pop() ?? "";
      expect(shareToken.length).toBeGreaterThan(20);
      expect((await fetch(`${server.url}/s/${shareToken}`)).status).toBe(200);

      const explorer = `${server.url}/cdn-cgi/explorer/api`;
      const namespaces = await fetch(`${explorer}/workers/durable_objects/namespaces`);
      expect(namespaces.status).not.toBe(200);
      expect(await namespaces.text()).not.toContain("WorkflowObject");
      const objects = await fetch(`${explorer}/workers/durable_objects/namespaces/waymark-WorkflowObject/objects`);
      expect(objects.status).not.toBe(200);
      // The write an agent on this machine would send to rewrite its own record.
      const rewrite = await fetch(`${explorer}/workers/durable_objects/namespaces/waymark-WorkflowObject/query`, {
        method: "POST",
        headers: { "Content-Type": "application/json" },
        body: JSON.stringify({ durable_object_id: workflowId, queries: [{ sql: "UPDATE workflow SET name = 'rewritten'" }] }),
      });
      expect(rewrite.status).not.toBe(200);
      const traces = await fetch(`${explorer}/local/observability/query`, {
        method: "POST",
        headers: { "Content-Type": "application/json" },
        body: JSON.stringify({ sql: "SELECT * FROM spans" }),
      });
      expect(traces.status).not.toBe(200);
      const resumed = await call("get_workflow", { workflow_id: workflowId });
      expect((resumed.workflow as { name: string }).name).toBe("Explorer probe");
    } finally {
      await server.stop();
    }
    // No trace store was written (it would hold the share link's URL).
    expect(existsSync(join(stateDir, "state", "v3", "observability"))).toBe(false);
  }, 240_000);
});
