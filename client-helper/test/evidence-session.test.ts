import { spawnSync } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import Ajv2020 from "ajv/dist/2020.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type DevServer, startDevServer } from "../../test/support/dev-server.js";
import { visibleText as visible } from "../../test/support/page-text.js";
import { cleanupTempDirs, Repo, tempDir } from "./fixtures.js";
import { BIN, ensureBuilt, mcpServerArgs, REPO_ROOT, SYSTEM_NODE } from "./support.js";

// Evidence, not claims, through the real chain: `waymark init` sets a project up for Claude Code,
// the installed hooks get the payloads Claude Code sends (a command that exited 0 reaches
// PostToolUse with `tool_response` {stdout, stderr, interrupted}; one that exited non-zero
// reaches PostToolUseFailure with `error` "Exit code N…"; both with `duration_ms`, as in Claude
// Code 2.1.328's hook input schema), the agent's tool calls go through the
// helper's MCP proxy to a real `wrangler dev`, and a reviewer reads the page, the Markdown summary
// and the JSON export, then checks the export with `waymark verify`.

// Secrets are assembled at run time so that no scanner mistakes this file for a leak.
const GITHUB_TOKEN = ["ghp_", "Zq8Lm2Np4Rt6Vx8Bz0Dc", "2Fg4Hj6Kl8Mn0Pq2"].join("");
const DB_PASSWORD = ["Tr0ub4dor", "-and-3-more"].join("");
const SESSION = "5c0a9f1e-2b3d-4e5f-8a9b-0c1d2e3f4a5b";

let server: DevServer;
let repo: Repo;
let home: string;
let cache: string;

beforeAll(async () => {
  ensureBuilt();
  server = await startDevServer();
  repo = Repo.init();
  repo.write("README.md", "# parser\n").write("package.json", '{"scripts":{"test":"node --test"}}\n');
  repo.commitAll("initial");
  home = tempDir("waymark-home-");
  cache = tempDir("waymark-cache-");
});
afterAll(async () => {
  await server?.stop();
  cleanupTempDirs();
});

function childEnv(): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [key, value] of Object.entries(process.env)) if (value !== undefined && !key.startsWith("WAYMARK_")) env[key] = value;
  return { ...env, HOME: home, XDG_CACHE_HOME: cache, XDG_CONFIG_HOME: join(home, ".config"), WAYMARK_TOKEN: server.token };
}

function waymark(args: string[], input?: string) {
  const result = spawnSync(SYSTEM_NODE, [BIN, ...args], { cwd: repo.dir, encoding: "utf8", input, env: childEnv() });
  return { code: result.status, stdout: result.stdout, stderr: result.stderr };
}

function installedCommand(event: string): string {
  const settings = JSON.parse(readFileSync(join(repo.dir, ".claude", "settings.json"), "utf8"));
  return String(settings.hooks[event][0].hooks[0].command);
}

/** The helper arguments of the hook `waymark init` installed for an event (its npx fallback names them). */
function installedHook(event: string): string[] {
  const [, fallback] = installedCommand(event).split(" 2>/dev/null || ");
  return (fallback ?? "").split(" ").slice(4);
}

/** Runs the installed hook with a payload in Claude Code's format (its common fields added). */
function hook(event: string, payload: Record<string, unknown>) {
  const common = {
    session_id: SESSION,
    transcript_path: join(home, ".claude", "projects", "-parser", `${SESSION}.jsonl`),
    cwd: repo.dir,
    permission_mode: "acceptEdits",
    hook_event_name: event,
  };
  const input = JSON.stringify({ ...common, ...payload });
  // The installed tool hooks spool the payload with sh alone; complete_task and the stop hook read the spool.
  const result = event.startsWith("PostToolUse")
    ? spawnSync("sh", ["-c", installedCommand(event)], { cwd: repo.dir, encoding: "utf8", input, env: childEnv() })
    : spawnSync(SYSTEM_NODE, [BIN, ...installedHook(event)], { cwd: repo.dir, encoding: "utf8", input, env: childEnv() });
  expect(result.status, result.stderr).toBe(0);
}

let toolUse = 0;
const toolUseId = () => `toolu_01${String(++toolUse).padStart(22, "0")}`;

function agentWrites(path: string, content: string, tool: "Write" | "Edit") {
  repo.write(path, content);
  const file_path = join(repo.dir, path);
  hook("PostToolUse", {
    tool_name: tool,
    tool_input: tool === "Write" ? { file_path, content } : { file_path, old_string: "x", new_string: "y" },
    tool_response: { filePath: file_path, success: true },
    tool_use_id: toolUseId(),
  });
}

/** A Bash call as Claude Code reports it: PostToolUse when it exited 0, PostToolUseFailure otherwise; output included, as sent. */
function agentRuns(command: string, exit: number) {
  const tool_input = { command, description: "Run it" };
  if (exit === 0) {
    hook("PostToolUse", {
      tool_name: "Bash",
      tool_input,
      tool_response: { stdout: `ok ${GITHUB_TOKEN} all green`, stderr: "", interrupted: false, isImage: false },
      tool_use_id: toolUseId(),
      duration_ms: 2300,
    });
  } else {
    hook("PostToolUseFailure", {
      tool_name: "Bash",
      tool_input,
      error: `Exit code ${exit}\nnot ok 1 - parses nested lists\n  DATABASE_URL=postgres://app:${DB_PASSWORD}@db/app`,
      is_interrupt: false,
      tool_use_id: toolUseId(),
      duration_ms: 2300,
    });
  }
}

async function call(client: Client, name: string, args: Record<string, unknown>) {
  const result = await client.callTool({ name, arguments: args });
  expect(result.isError, JSON.stringify(result.content)).toBeFalsy();
  return { structured: (result.structuredContent ?? {}) as Record<string, string>, content: result.content as { text?: string }[] };
}

describe("observed commands and redaction through the real helper, hooks and wrangler dev", () => {
  it("a failing then a passing test run after the edits, a claim of success, secrets in a command and a decision", async () => {
    expect(waymark(["init", "--url", server.url, "--agent", "claude"])).toMatchObject({ code: 0 });
    hook("SessionStart", { source: "startup" });
    const mcp = JSON.parse(readFileSync(join(repo.dir, ".mcp.json"), "utf8")).mcpServers.waymark;
    const client = new Client({ name: "claude-code-like", version: "1.0.0" });
    await client.connect(
      new StdioClientTransport({
        command: SYSTEM_NODE,
        args: [BIN, ...mcpServerArgs(mcp)],
        cwd: repo.dir,
        env: childEnv(),
        stderr: "pipe",
      }),
    );
    try {
      const { workflow_id, share_url } = (await call(client, "start_workflow", { name: "Parser" })).structured;
      const tested = (await call(client, "start_task", { workflow_id, name: "Nested lists", goal: "Parse nested lists" })).structured
        .task_id;
      agentWrites("src/parse.js", "export const parse = (s) => JSON.parse(s);\n", "Write");
      agentWrites("README.md", "# parser\n\nParses nested lists.\n", "Edit");
      agentRuns("npm test", 1);
      agentRuns(`curl -s -H "Authorization: token ${GITHUB_TOKEN}" https://api.github.com/user`, 0);
      agentRuns("npm test", 0);
      const decision = await call(client, "log_decision", {
        task_id: tested,
        category: "workaround",
        question: "How do the tests reach the database?",
        options_considered: ["a local container", "the staging database"],
        chosen: "the staging database",
        reasoning: `DATABASE_URL=postgres://app:${DB_PASSWORD}@staging/app is already set`,
      });
      // The agent is told its text went out with a secret removed (so it does not repeat it).
      expect(decision.content.map((c) => c.text).join("\n")).toContain("waymark: 1 secret (URL credentials) removed before sending");
      await call(client, "complete_task", {
        task_id: tested,
        status: "success",
        outcome: { summary: "Nested lists parse; all tests pass." },
        metadata: { tests_status: "passed", commands_executed: ["npm test"] },
      });

      // A second task: the tests ran, then the agent edited again, and still claims they pass.
      const stale = (await call(client, "start_task", { workflow_id, name: "Docs", goal: "Document it" })).structured.task_id;
      agentRuns("npx vitest run", 0);
      agentWrites("README.md", "# parser\n\nParses nested lists (and maps).\n", "Edit");
      await call(client, "complete_task", {
        task_id: stale,
        status: "success",
        outcome: { summary: "Documented." },
        metadata: { tests_status: "passed" },
      });

      const task = (await client.callTool({ name: "get_workflow", arguments: { task_id: tested } })).structuredContent as {
        task: { commands: { runs: { command: string; exit_code: number | null; duration_ms: number | null; kinds: string[] }[] } };
      };
      expect(task.task.commands.runs.map((r) => [r.command, r.exit_code, r.duration_ms, r.kinds])).toEqual([
        ["npm test", 1, 2300, ["test"]],
        ['curl -s -H "Authorization: token [redacted: GitHub token]" https://api.github.com/user', 0, 2300, []],
        ["npm test", 0, 2300, ["test"]],
      ]);

      const page = await (await fetch(share_url as string)).text();
      const shown = visible(page);
      expect(shown).toMatch(
        /Tests: claimed: tests passed \(ran npm test\) · observed: npm test ✓ exit 0 \(passed\) at [^·]+ after the last edit/,
      );
      // Both runs, in order, the failing one in red and in words.
      expect(shown).toMatch(/npm test ✕ exit 1 \(failed\) · .*npm test ✓ exit 0 \(passed\) · /);
      expect(page).toContain('<span class="exit exit-fail"><span aria-hidden="true">✕</span> exit 1 (failed)</span>');
      expect(shown).toContain(
        "Tests: claimed: tests passed · no test run observed after the last edit (last before it: npx vitest run ✓ exit 0 (passed) at",
      );
      expect(shown).toContain("DATABASE_URL=postgres://app:[redacted: URL credentials]@staging/app");

      const markdown = await (await fetch(`${share_url}/export.md`)).text();
      expect(markdown).toMatch(
        /- Tests: claimed: tests passed \(ran `npm test`\) · observed: `npm test` ✓ exit 0 \(passed\) at \d\d:\d\d UTC after the last edit/,
      );
      expect(markdown).toContain(
        "- Tests: claimed: tests passed · no test run observed after the last edit (last before it: `npx vitest run` ✓ exit 0 (passed) at",
      );

      const exportText = await (await fetch(`${share_url}/export.json`)).text();
      const schema = JSON.parse(readFileSync(join(REPO_ROOT, "docs", "schemas", "export-v1.json"), "utf8"));
      const validate = new Ajv2020({ allErrors: true, strict: false }).compile(schema);
      expect(validate(JSON.parse(exportText)), JSON.stringify(validate.errors)).toBe(true);

      // No secret the agent wrote or a command printed reached the record, and no output at all.
      for (const text of [page, markdown, exportText]) {
        expect(text).not.toContain(GITHUB_TOKEN);
        expect(text).not.toContain(DB_PASSWORD);
        expect(text).not.toContain("all green");
        expect(text).not.toContain("parses nested lists");
      }

      // The export with its commands still verifies: every field follows from the signed events.
      const file = join(tempDir("waymark-export-"), "export.json");
      writeFileSync(file, exportText);
      const verified = waymark(["verify", file, "--endpoint", server.url]);
      expect(verified.code, verified.stdout + verified.stderr).toBe(0);
    } finally {
      await client.close();
    }
  });
});
