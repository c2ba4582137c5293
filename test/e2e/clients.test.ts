import { execFileSync, spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { join, resolve } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import type { DevServer } from "../support/dev-server";
import { sharedDevServer } from "../support/shared-server";

/**
 * Real typed clients, as a Python agent would use them: fastmcp's typed results and the Python
 * SDK's validated structuredContent. They drop every field a tool's outputSchema does not declare,
 * so this proves `resumed`, `warnings`… reach such agents. The clients live in a virtualenv that
 * .ci/run prepares (and this test creates when missing); without python3 and venv it is skipped.
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

describe.skipIf(missing !== null)(`typed Python MCP clients${missing ? ` (skipped: ${missing})` : ""}`, () => {
  let server: DevServer;

  beforeAll(async () => {
    const ready = spawnSync(PYTHON, ["-c", "import fastmcp, mcp"], { stdio: "ignore" }).status === 0;
    if (!ready) {
      execFileSync(PIP, ["install", "-q", "--disable-pip-version-check", "--retries", "0", ...PACKAGES], {
        stdio: "inherit",
        timeout: 900_000,
      });
    }
    server = sharedDevServer();
  }, 960_000);

  it("see resumed, warnings and every other returned field", () => {
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
    expect(seen).toMatchObject({ get_workflow_error: false, get_workflow: ["workflows"] });
  });
});
