import { execFileSync, spawn, spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { join, resolve } from "node:path";
import { INSTRUCTIONS } from "@waymark/protocol/instructions";
import { beforeAll, describe, expect, it } from "vitest";
import { launchChromium } from "../support/chromium";
import type { DevServer } from "../support/dev-server";
import { callTool, connect } from "../support/mcp-client";
import { failUnderCi, skipLocally, skippedBecause } from "../support/prerequisites";
import { sharedDevServer } from "../support/shared-server";

/**
 * Real typed clients, as a Python agent would use them: fastmcp's typed results and the Python
 * SDK's validated structuredContent. They drop every field a tool's outputSchema does not declare,
 * so this proves `resumed`, `warnings`… reach such agents. The clients live in a virtualenv that
 * .ci/run prepares (and this test creates when missing); without python3 and venv, or when the
 * clients cannot install, it is skipped locally and fails under CI=true (../support/prerequisites).
 */
const REPO_ROOT = resolve(import.meta.dirname, "../..");
const VENV = join(REPO_ROOT, "node_modules/.cache/waymark-python-clients");
const PYTHON = join(VENV, "bin/python");
const PIP = join(VENV, "bin/pip");
const PACKAGES = ["mcp==2.3.0", "fastmcp==4.0.10"];

/** Why the clients cannot run here, or null; creates the virtualenv when python3 can. */
function pythonMissing(): string | null {
  if (existsSync(PIP)) return null;
  if (spawnSync("python3", ["--version"], { stdio: "ignore" }).status !== 0) return "python3 is not installed";
  const venv = spawnSync("python3", ["-m", "venv", "--clear", VENV], { stdio: "ignore" });
  return venv.status === 0 ? null : "python3 cannot create a virtualenv (install python3-venv)";
}

const missing = pythonMissing();

describe.skipIf(skipLocally(missing))(`typed Python MCP clients${skippedBecause(missing)}`, () => {
  let server: DevServer;

  beforeAll(async () => {
    failUnderCi(missing, "the Python MCP clients (mcp, fastmcp)");
    const ready = spawnSync(PYTHON, ["-c", "import fastmcp, mcp"], { stdio: "ignore" }).status === 0;
    if (!ready) {
      execFileSync(PIP, ["install", "-q", "--disable-pip-version-check", "--retries", "0", ...PACKAGES], {
        stdio: "inherit",
        timeout: 900_000,
      });
    }
    server = sharedDevServer();
  }, 960_000);

  it("see resumed, warnings and every other returned field; list and get the prompts", () => {
    const output = execFileSync(PYTHON, [join(import.meta.dirname, "clients/typed_results.py"), `${server.url}/mcp`, server.token], {
      encoding: "utf8",
      timeout: 120_000,
    });
    const seen = JSON.parse(output.trim().split("\n").at(-1) ?? "{}") as Record<string, unknown>;
    expect(seen.resumed).toBe(true);
    expect(seen.start_workflow_resumed).toEqual(expect.arrayContaining(["workflow_id", "created_at", "resumed", "resume_candidate"]));
    expect(seen.start_task).toEqual(expect.arrayContaining(["task_id", "snapshot_id", "snapshot_type", "started_at", "warnings"]));
    expect(seen.log_milestone).toEqual(expect.arrayContaining(["id", "task_id", "warnings"]));
    expect(seen.warnings).toEqual([expect.stringMatching(/6 milestones on this task/)]);
    expect(seen).toMatchObject({ get_workflow_error: false, get_workflow: ["workflows"], tools_listed: 8 });
    // The prompts, listed and fetched as a client that shows them as commands does.
    expect(seen.prompts).toEqual(["instructions", "resume"]);
    expect(seen.instructions).toBe(INSTRUCTIONS);
    expect(seen.resume).toMatch(/^Resume this Waymark workflow/);
    expect(seen.resume).toContain('"Typed clients" active');
    expect(seen.resume).toMatch(/^open: tk_\S+ t$/m);
    // The context budget as a real client measures it (test/mcp/contract.test.ts holds the same bound).
    console.log(`tools/list as the Python SDK holds it: ${seen.tools_list_bytes} bytes`);
    expect(seen.tools_list_bytes).toBeLessThanOrEqual(6000);
  });

  it("follows a workflow (subscriptions/listen): notified when a reviewer posts feedback in Chromium; revoking its token ends the stream", async () => {
    const api = (method: string, path: string, body?: unknown) =>
      fetch(`${server.url}${path}`, {
        method,
        headers: { Authorization: `Bearer ${server.token}`, "Content-Type": "application/json" },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
    const created = (await (await api("POST", "/api/tokens", { name: "follower", scopes: ["read"] })).json()) as {
      id: string;
      token: string;
    };
    const agent = await connect(server, { sdk: "v1", name: "agent" });
    const started = await callTool(agent, "start_workflow", { name: "Followed from Python" });
    const workflowId = String(started.structured.workflow_id);
    const uri = `waymark://workflows/${workflowId}`;

    const follower = spawn(PYTHON, [join(import.meta.dirname, "clients/follow.py"), `${server.url}/mcp`, created.token, uri], {
      stdio: ["ignore", "pipe", "pipe"],
    });
    const lines: Record<string, unknown>[] = [];
    let errors = "";
    follower.stdout.setEncoding("utf8").on("data", (chunk: string) => {
      for (const line of chunk.split("\n").filter(Boolean)) lines.push(JSON.parse(line) as Record<string, unknown>);
    });
    follower.stderr.setEncoding("utf8").on("data", (chunk: string) => {
      errors += chunk;
    });
    const exited = new Promise<number | null>((done) => follower.on("exit", done));
    try {
      await expect
        .poll(() => lines[0], { timeout: 60_000, message: errors })
        .toEqual({ ready: true, protocol: "2026-07-28", honored: [uri] });

      // A reviewer comments on the owner view, in Chromium.
      const browser = await launchChromium();
      try {
        const page = await browser.newPage();
        await page.goto(`${server.url}/login`);
        await page.fill('input[name="token"]', server.token);
        await Promise.all([page.waitForURL(/\/dashboard/), page.click('button[type="submit"]')]);
        await page.goto(`${server.url}/w/${workflowId}`);
        await page.fill('textarea[name="body"]', "Please split this task");
        await Promise.all([page.waitForURL(new RegExp(`/w/${workflowId}#`)), page.click('#feedback button[type="submit"]')]);
      } finally {
        await browser.close();
      }
      await expect.poll(() => lines.slice(1), { timeout: 30_000, message: errors }).toEqual([{ event: "ResourceUpdated", uri }]);

      // Revoked: the next check of its credential ends the subscription.
      expect((await api("DELETE", `/api/tokens/${created.id}`)).status).toBe(200);
      await expect.poll(() => lines.at(-1), { timeout: 30_000, message: errors }).toEqual({ ended: "graceful" });
      expect(await exited).toBe(0);
    } finally {
      follower.kill();
      await agent.close();
    }
  }, 180_000);
});
