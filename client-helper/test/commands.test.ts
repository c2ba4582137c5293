import { mkdirSync, realpathSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { AgentName } from "@waymark/protocol/agents";
import { observedCommandsSchema } from "@waymark/protocol/wire";
import { WIRE_LIMITS } from "@waymark/protocol/wire-constants";
import { afterAll, describe, expect, it } from "vitest";
import { boundedCommand, forgetCommands, observedCommands, selectRuns } from "../src/hooks/commands.js";
import { runHook } from "../src/hooks/hook-runner.js";
import { Journal } from "../src/hooks/journal.js";
import { agentCalled, cleanupTempDirs, Repo, tempDir } from "./fixtures.js";

afterAll(cleanupTempDirs);

const GITHUB_TOKEN = `ghp_${"A1b2C3d4E5".repeat(4)}`;

// Payloads as the real CLIs sent them (Claude Code 2.1.328, Codex 0.169.0; captured with hooks that
// dumped their stdin), and Cursor's in the format its hooks documentation gives.
const CLAUDE_BASE = {
  session_id: "bac1b045-4367-48fa-bd29-fab745b056fd",
  transcript_path: "/home/u/.claude/projects/-repo/bac1b045-4367-48fa-bd29-fab745b056fd.jsonl",
  cwd: "/repo",
  permission_mode: "acceptEdits",
  tool_name: "Bash",
};
const CLAUDE_FAILED = {
  ...CLAUDE_BASE,
  hook_event_name: "PostToolUseFailure",
  tool_input: { command: "echo fail; sleep 0.3; exit 3", description: "fails" },
  tool_use_id: "toolu_7401e6d0f3a9a77c83c8a4e3",
  error: "Exit code 3\nfail",
  is_interrupt: false,
  duration_ms: 561,
};
const CLAUDE_TIMED_OUT = {
  ...CLAUDE_FAILED,
  tool_input: { command: "sleep 5", timeout: 1000, description: "bg" },
  error: "Exit code 143\nCommand timed out after 1s",
  duration_ms: 1094,
};
const CLAUDE_PASSED = {
  ...CLAUDE_BASE,
  hook_event_name: "PostToolUse",
  tool_input: { command: "echo ok && true", description: "passes" },
  tool_response: { stdout: "ok", stderr: "", interrupted: false, isImage: false, noOutputExpected: false },
  tool_use_id: "toolu_2f9f76fa04c838d0cd5804ff",
  duration_ms: 21,
};
const CODEX_RAN = {
  session_id: "01a21d36-660c-7111-8543-dd587b67838b",
  turn_id: "01a21d36-6684-7fd3-895a-a5b50988efb3",
  transcript_path: "/home/u/.codex/sessions/2026/11/27/rollout-2026-11-27T13-33-54-01a21d36-660c-7111-8543-dd587b67838b.jsonl",
  cwd: "/repo",
  hook_event_name: "PostToolUse",
  model: "gpt-5.5",
  permission_mode: "bypassPermissions",
  tool_name: "Bash",
  tool_input: { command: "echo fail; sleep 0.3; exit 3" },
  tool_response: "fail\n",
  tool_use_id: "call_0c4c8f46f24f5510c63df3b7",
};
const CURSOR_RAN = {
  hook_event_name: "afterShellExecution",
  conversation_id: "conv-123",
  generation_id: "gen-456",
  workspace_roots: ["/repo"],
  command: "npm test",
  cwd: "/repo",
  output: "1 passing",
  duration: 150,
};

describe("shellRun: what each agent's hook reports of a shell command", () => {
  it.each([
    ["claude", CLAUDE_FAILED, { command: "echo fail; sleep 0.3; exit 3", exit_code: 3, duration_ms: 561 }],
    ["claude", CLAUDE_TIMED_OUT, { command: "sleep 5", exit_code: 143, duration_ms: 1094 }],
    ["claude", CLAUDE_PASSED, { command: "echo ok && true", exit_code: 0, duration_ms: 21 }],
    // Interrupted, or sent to the background: it has not ended, so no exit code.
    [
      "claude",
      { ...CLAUDE_PASSED, tool_response: { ...CLAUDE_PASSED.tool_response, interrupted: true } },
      { command: "echo ok && true", exit_code: null, duration_ms: null },
    ],
    [
      "claude",
      { ...CLAUDE_PASSED, tool_input: { command: "npm run dev", run_in_background: true } },
      { command: "npm run dev", exit_code: null, duration_ms: null },
    ],
    // A failure that names no exit code (the user denied it, say): not observed.
    [
      "claude",
      { ...CLAUDE_FAILED, error: "Permission denied by user" },
      { command: "echo fail; sleep 0.3; exit 3", exit_code: null, duration_ms: 561 },
    ],
    ["claude", { ...CLAUDE_FAILED, is_interrupt: true }, { command: "echo fail; sleep 0.3; exit 3", exit_code: null, duration_ms: 561 }],
    // Codex's hook says neither: the call is kept so its session file can say it later.
    [
      "codex",
      CODEX_RAN,
      {
        command: "echo fail; sleep 0.3; exit 3",
        exit_code: null,
        duration_ms: null,
        call_id: "call_0c4c8f46f24f5510c63df3b7",
        transcript: CODEX_RAN.transcript_path,
      },
    ],
    ["cursor", CURSOR_RAN, { command: "npm test", exit_code: null, duration_ms: 150 }],
  ] as const)("%s %#", (agent, payload, expected) => {
    expect(agentCalled(agent).shellRun(payload as Record<string, unknown>)).toEqual(expected);
  });

  it.each([
    ["claude", { ...CLAUDE_BASE, hook_event_name: "PostToolUse", tool_name: "Edit", tool_input: { file_path: "/repo/a.ts" } }],
    ["claude", { ...CLAUDE_PASSED, tool_input: {} }],
    ["codex", { ...CODEX_RAN, tool_name: "apply_patch", tool_input: { command: "*** Begin Patch\n*** Add File: a\n+a\n*** End Patch" } }],
    // apply_patch through the shell is an edit, not a command run.
    ["codex", { ...CODEX_RAN, tool_input: { command: "apply_patch <<'EOF'\n*** Begin Patch\n*** Add File: a\n+a\n*** End Patch\nEOF" } }],
    ["cursor", { hook_event_name: "afterFileEdit", file_path: "/repo/a.ts" }],
  ] as const)("not a shell command: %s %#", (agent, payload) => {
    expect(agentCalled(agent).shellRun(payload as Record<string, unknown>)).toBeNull();
  });
});

describe("boundedCommand: what of a command line may leave the machine", () => {
  it("redacts secrets with a marker naming them", () => {
    expect(boundedCommand(`GITHUB_TOKEN=${GITHUB_TOKEN} npm test`).command).toBe("GITHUB_TOKEN=[redacted: GitHub token] npm test");
    expect(boundedCommand("mysql -u root --password=hunter2 -e 'select 1'").command).toBe(
      "mysql -u root --password=[redacted: password] -e 'select 1'",
    );
  });

  it("cuts a long line at the byte bound, on a character boundary, and says so", () => {
    const long = `echo ${"é".repeat(2000)}`;
    const bounded = boundedCommand(long);
    expect(bounded.truncated).toBe(true);
    expect(Buffer.byteLength(bounded.command)).toBeLessThanOrEqual(WIRE_LIMITS.COMMAND_BYTES);
    expect(bounded.command.endsWith("é…")).toBe(true);
    expect(boundedCommand("npm test")).toEqual({ command: "npm test" });
  });

  it("a secret past the bound is never cut into a visible prefix: redaction comes first", () => {
    const bounded = boundedCommand(`${"x".repeat(490)} ${GITHUB_TOKEN}`);
    expect(bounded.command).not.toContain("ghp_");
  });

  it("control characters are shown as escapes (the record is text people read)", () => {
    expect(boundedCommand("printf '\u001b[31mred'").command).toBe("printf '\\x1b[31mred'");
  });
});

describe("selectRuns: the bound keeps the evidence", () => {
  it("keeps the last run of each kind and the latest checks before other commands", () => {
    const runs = [
      { id: 0, kinds: ["typecheck"] },
      { id: 1, kinds: ["test"] },
      ...Array.from({ length: 10 }, (_, i) => ({ id: 2 + i, kinds: [] })),
      { id: 12, kinds: ["test"] },
      { id: 13, kinds: [] },
    ] as { id: number; kinds: ("test" | "typecheck")[] }[];
    const { runs: kept, omitted } = selectRuns(runs, 4);
    expect(kept.map((r) => r.id)).toEqual([0, 1, 12, 13]);
    expect(omitted).toBe(10);
    expect(selectRuns(runs, 100)).toEqual({ runs, omitted: 0 });
  });
});

/** A repository with one task open in the hooks' journal, as `start_task` through the helper leaves it. */
async function openTask(taskId = "tk_1") {
  const repo = Repo.init();
  const cache = tempDir("waymark-cache-");
  const config = tempDir("waymark-config-");
  const root = realpathSync(repo.dir);
  const journal = new Journal(root, cache);
  await journal.taskStarted({ task_id: taskId, workflow_id: "wf_1", name: "Do it", started_at: Date.now() - 60_000 });
  const run = (agent: AgentName, payload: Record<string, unknown>) =>
    runHook("post-tool-use", JSON.stringify({ ...payload, cwd: root, workspace_roots: [root] }), {
      agent: agentCalled(agent),
      version: "0.1.0",
      cacheDir: cache,
    });
  return { repo, root, cache, config, journal, run };
}

describe("recorded through the hooks, read at complete_task", () => {
  it("a failing then a passing test run, in order, with exit codes, durations and kinds; never their output", async () => {
    const { root, cache, run } = await openTask();
    await run("claude", { ...CLAUDE_BASE, hook_event_name: "SessionStart" });
    await run("claude", {
      ...CLAUDE_FAILED,
      tool_input: { command: `API_TOKEN=${GITHUB_TOKEN} npm test` },
      error: "Exit code 1\nFAIL src/a.test.ts",
    });
    await run("claude", {
      ...CLAUDE_PASSED,
      tool_input: { command: "npm test" },
      tool_response: { ...CLAUDE_PASSED.tool_response, stdout: "1 passing" },
    });
    const observed = await observedCommands(root, "tk_1", cache);
    expect(observedCommandsSchema.parse(observed)).toEqual(observed);
    expect(observed?.runs.map(({ command, exit_code, duration_ms, kinds }) => ({ command, exit_code, duration_ms, kinds }))).toEqual([
      { command: "API_TOKEN=[redacted: GitHub token] npm test", exit_code: 1, duration_ms: 561, kinds: ["test"] },
      { command: "npm test", exit_code: 0, duration_ms: 21, kinds: ["test"] },
    ]);
    expect(observed?.last_edit_at).toBeNull();
    const stored = JSON.stringify(observed);
    for (const never of ["FAIL src/a.test.ts", "1 passing", "ghp_"]) expect(stored).not.toContain(never);
    // Once sent, the task's log is gone.
    await forgetCommands(root, "tk_1", cache);
    expect((await observedCommands(root, "tk_1", cache))?.runs).toEqual([]);
  });

  it("the last edit is the last one that named a file, not a shell command", async () => {
    const { root, cache, run } = await openTask();
    await run("claude", {
      ...CLAUDE_BASE,
      hook_event_name: "PostToolUse",
      tool_name: "Write",
      tool_input: { file_path: join(root, "a.ts"), content: "x" },
    });
    const edited = Date.now();
    await run("codex", { ...CODEX_RAN, tool_input: { command: "npm test" } });
    const observed = await observedCommands(root, "tk_1", cache);
    expect(observed?.last_edit_at).toBeGreaterThan(edited - 5000);
    expect(observed?.last_edit_at).toBeLessThanOrEqual(edited);
    expect(observed?.runs[0]?.at).toBeGreaterThanOrEqual(observed?.last_edit_at ?? Number.POSITIVE_INFINITY);
  });

  it("Codex: exit codes and durations come from its session file, by the call's id", async () => {
    const { root, cache, run } = await openTask();
    const rollout = join(tempDir("waymark-codex-"), "rollout.jsonl");
    const completed = (id: string, exit: number) =>
      JSON.stringify({
        timestamp: "2026-11-27T13:33:54.812Z",
        type: "event_msg",
        payload: {
          type: "item_completed",
          item: {
            type: "CommandExecution",
            id,
            command: ["/bin/bash", "-lc", "npm test"],
            status: exit === 0 ? "completed" : "failed",
            aggregated_output: "OUTPUT NEVER KEPT",
            exit_code: exit,
            duration: { secs: 1, nanos: 250_000_000 },
          },
        },
      });
    writeFileSync(
      rollout,
      `${[completed("call_a", 1), '{"type":"response_item","payload":{"type":"function_call_output"}}', completed("call_b", 0)].join("\n")}\n`,
    );
    await run("codex", { ...CODEX_RAN, transcript_path: rollout, tool_input: { command: "npm test" }, tool_use_id: "call_a" });
    await run("codex", { ...CODEX_RAN, transcript_path: rollout, tool_input: { command: "npm test" }, tool_use_id: "call_b" });
    await run("codex", { ...CODEX_RAN, transcript_path: rollout, tool_input: { command: "ls" }, tool_use_id: "call_unknown" });
    const observed = await observedCommands(root, "tk_1", cache);
    expect(observed?.runs.map((r) => [r.command, r.exit_code, r.duration_ms])).toEqual([
      ["npm test", 1, 1250],
      ["npm test", 0, 1250],
      ["ls", null, null],
    ]);
    expect(JSON.stringify(observed)).not.toContain("OUTPUT NEVER KEPT");
  });

  it("the user's own rules (user config, never the repository's) name a command's kind", async () => {
    const { repo, root, cache, config, run } = await openTask();
    mkdirSync(join(config, "waymark"), { recursive: true });
    writeFileSync(
      join(config, "waymark", "config.json"),
      JSON.stringify({ command_kinds: { test: ["./run-checks"], lint: [42, "./style.sh"] } }),
    );
    // A repository cannot make its own script count as its tests.
    repo.write(".waymark/config.json", JSON.stringify({ command_kinds: { test: ["./fake-tests"] } }));
    const saved = process.env.XDG_CONFIG_HOME;
    process.env.XDG_CONFIG_HOME = config;
    try {
      for (const command of ["./run-checks --all", "./style.sh", "./fake-tests"]) await run("cursor", { ...CURSOR_RAN, command });
    } finally {
      if (saved === undefined) delete process.env.XDG_CONFIG_HOME;
      else process.env.XDG_CONFIG_HOME = saved;
    }
    const observed = await observedCommands(root, "tk_1", cache);
    expect(observed?.runs.map((r) => [r.command, r.kinds])).toEqual([
      ["./run-checks --all", ["test"]],
      ["./style.sh", ["lint"]],
      ["./fake-tests", []],
    ]);
  });

  it("bounded per task: past the bound the log is compacted to what is sent, and the rest counted", async () => {
    const { root, cache, journal } = await openTask();
    const { recordShellRun } = await import("../src/hooks/commands.js");
    const total = WIRE_LIMITS.COMMANDS * 6;
    const start = Date.now() - 30_000;
    for (let i = 0; i < total; i++) {
      const command = i === 3 ? "npx tsc --noEmit" : i === total - 10 ? "npm test" : `cat ${"f".repeat(400)}${i}`;
      await recordShellRun(journal, { command, exit_code: 0, duration_ms: 1 }, "claude", start + i, {});
    }
    const observed = await observedCommands(root, "tk_1", cache);
    expect(observed?.runs).toHaveLength(WIRE_LIMITS.COMMANDS);
    expect(observed?.omitted).toBe(total - WIRE_LIMITS.COMMANDS);
    expect(observed?.runs.filter((r) => r.kinds.length > 0).map((r) => r.command)).toEqual(["npx tsc --noEmit", "npm test"]);
    expect(observedCommandsSchema.safeParse(observed).success).toBe(true);
  });

  it("no hook of this repository observes commands: not observed (undefined), never an empty list", async () => {
    const { root, cache } = await openTask();
    expect(await observedCommands(root, "tk_1", cache)).toBeUndefined();
  });

  it("a command before the task started is not the task's", async () => {
    const { root, cache, journal } = await openTask();
    const { recordShellRun } = await import("../src/hooks/commands.js");
    await recordShellRun(journal, { command: "npm test", exit_code: 0, duration_ms: 1 }, "claude", Date.now() - 120_000, {});
    await journal.sessionSeen({ agent: "claude", session_id: "s", transcript_path: null, seen_at: Date.now(), commands: true });
    expect((await observedCommands(root, "tk_1", cache))?.runs).toEqual([]);
  });
});
