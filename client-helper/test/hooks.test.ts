import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, realpathSync, rmSync, symlinkSync, utimesSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { type AgentName, agentHooks } from "@waymark/protocol/agents";
import { afterAll, describe, expect, it } from "vitest";
import { fileClockPast } from "../../test/support/file-clock.js";
import { runHook, SPOOLED_TOOL_CALLS } from "../src/hooks/hook-runner.js";
import { Journal } from "../src/hooks/journal.js";
import { drainSpool } from "../src/hooks/spool.js";
import { stopReminder } from "../src/hooks/stop-state.js";
import { agentEdits } from "../src/provenance-fields.js";
import { transcriptUsage } from "../src/usage/transcript.js";
import { agentCalled, cleanupTempDirs, Repo, tempDir } from "./fixtures.js";

afterAll(cleanupTempDirs);

/** A repository with one task open in the hooks' journal, as `start_task` through the helper leaves it. */
async function openTask(taskId = "tk_1") {
  const repo = Repo.init();
  const cache = tempDir("waymark-cache-");
  const journal = new Journal(realpathSync(repo.dir), cache);
  await journal.taskStarted({ task_id: taskId, workflow_id: "wf_1", name: "Do it", started_at: Date.now() - 60_000 });
  const run = (agent: AgentName, event: "session-start" | "post-tool-use" | "stop", payload: Record<string, unknown>) =>
    runHook(event, JSON.stringify(payload), { agent: agentCalled(agent), version: "0.1.0", cacheDir: cache });
  return { repo, cache, journal, run };
}

describe("what a tool call did to files (each agent's toolCall)", () => {
  it.each([
    [{ tool_name: "Write", tool_input: { file_path: "/r/a.ts", content: "x" } }, "claude", { tool: "Write", paths: ["/r/a.ts"] }],
    [
      { tool_name: "Edit", tool_input: { file_path: "/r/a.ts", old_string: "a", new_string: "b" } },
      "claude",
      { tool: "Edit", paths: ["/r/a.ts"] },
    ],
    [{ tool_name: "MultiEdit", tool_input: { file_path: "/r/a.ts", edits: [] } }, "claude", { tool: "MultiEdit", paths: ["/r/a.ts"] }],
    [
      { tool_name: "NotebookEdit", tool_input: { notebook_path: "/r/n.ipynb", new_source: "" } },
      "claude",
      { tool: "NotebookEdit", paths: ["/r/n.ipynb"] },
    ],
    [{ tool_name: "Read", tool_input: { file_path: "/r/a.ts" } }, "claude", null],
    [{ tool_name: "Bash", tool_input: { command: "touch x" } }, "claude", null],
    [{ tool_name: "Write", tool_input: {} }, "claude", null],
    [
      { hook_event_name: "afterFileEdit", file_path: "/r/b.ts", edits: [{ old_string: "", new_string: "x" }] },
      "cursor",
      { tool: "afterFileEdit", paths: ["/r/b.ts"] },
    ],
    [{ hook_event_name: "afterFileEdit" }, "cursor", null],
    // Cursor: a shell command is activity; a subagent's own edits come in subagentStop's modified_files.
    [
      { hook_event_name: "afterShellExecution", command: "npm test", output: "", duration: 150 },
      "cursor",
      { tool: "afterShellExecution", paths: [] },
    ],
    [
      { hook_event_name: "subagentStop", subagent_type: "generalPurpose", status: "completed", modified_files: ["src/x.ts", "/r/y.ts"] },
      "cursor",
      { tool: "subagentStop", paths: ["src/x.ts", "/r/y.ts"] },
    ],
    [{ hook_event_name: "subagentStop", status: "completed", modified_files: [] }, "cursor", null],
    // Codex 0.169's PostToolUse payloads, as the real CLI sent them: apply_patch carries the patch.
    [
      {
        hook_event_name: "PostToolUse",
        tool_name: "apply_patch",
        tool_input: { command: "*** Begin Patch\n*** Add File: c.txt\n+patched\n*** End Patch\n" },
      },
      "codex",
      { tool: "apply_patch", paths: ["c.txt"] },
    ],
    [
      {
        tool_name: "apply_patch",
        tool_input: {
          command: "*** Begin Patch\n*** Update File: src/a.ts\n*** Move to: src/b.ts\n@@\n-x\n+y\n*** Delete File: old.ts\n*** End Patch",
        },
      },
      "codex",
      { tool: "apply_patch", paths: ["src/a.ts", "src/b.ts", "old.ts"] },
    ],
    [{ tool_name: "Bash", tool_input: { command: "echo shell > b.txt" } }, "codex", { tool: "Bash", paths: [] }],
    [
      { tool_name: "Bash", tool_input: { command: "apply_patch <<'EOF'\n*** Begin Patch\n*** Add File: d.txt\n+d\n*** End Patch\nEOF" } },
      "codex",
      { tool: "Bash", paths: ["d.txt"] },
    ],
    [{ tool_name: "mcp__waymark__start_task", tool_input: {} }, "codex", null],
  ])("%j (%s) → %j", (payload, agent, expected) => {
    expect(agentCalled(agent).toolCall(payload)).toEqual(expected);
  });
});

describe("hooks", () => {
  it("post-tool-use records repository-relative paths per open task, and nothing outside the repository", async () => {
    const { repo, journal, run } = await openTask();
    mkdirSync(join(repo.dir, "sub"));
    await run("claude", "post-tool-use", { cwd: repo.dir, tool_name: "Write", tool_input: { file_path: join(repo.dir, "src", "a b.ts") } });
    await run("claude", "post-tool-use", { cwd: join(repo.dir, "sub"), tool_name: "Edit", tool_input: { file_path: "rel.ts" } });
    await run("claude", "post-tool-use", { cwd: repo.dir, tool_name: "Write", tool_input: { file_path: "/tmp/elsewhere.ts" } });
    await run("claude", "post-tool-use", {
      cwd: repo.dir,
      tool_name: "Write",
      tool_input: { file_path: join(repo.dir, "..", "sibling.ts") },
    });
    await run("cursor", "post-tool-use", {
      workspace_roots: [repo.dir],
      hook_event_name: "afterFileEdit",
      file_path: join(repo.dir, "src", "a b.ts"),
    });
    // The agent may know the repository through a symbolic link.
    const link = join(tempDir("waymark-link-"), "checkout");
    symlinkSync(repo.dir, link);
    writeFileSync(join(repo.dir, "linked.ts"), "");
    await run("claude", "post-tool-use", { cwd: link, tool_name: "Write", tool_input: { file_path: join(link, "linked.ts") } });
    await run("claude", "post-tool-use", { cwd: link, tool_name: "Write", tool_input: { file_path: join(link, "gone.ts") } });
    expect((await journal.editedPaths("tk_1")).paths).toEqual(["src/a b.ts", "sub/rel.ts", "linked.ts", "gone.ts"]);
  });

  it("Codex: apply_patch paths are recorded relative to the session's directory; a shell command counts as work for the stop reminder", async () => {
    const { repo, journal, run } = await openTask();
    const patch = "*** Begin Patch\n*** Add File: src/new.ts\n+x\n*** Update File: README.md\n@@\n-a\n+b\n*** End Patch\n";
    const payload = (tool_name: string, command: string) => ({
      session_id: "01a21cad-e4aa-7ad3-a9dd-0495be2bd73f",
      turn_id: "t",
      transcript_path: "/home/u/.codex/sessions/2026/11/27/rollout-x.jsonl",
      cwd: repo.dir,
      hook_event_name: "PostToolUse",
      model: "gpt-5.3-codex",
      permission_mode: "bypassPermissions",
      tool_name,
      tool_input: { command },
      tool_response: "",
      tool_use_id: "c2",
    });
    expect(await run("codex", "post-tool-use", payload("apply_patch", patch))).toEqual({ stdout: "" });
    expect((await journal.editedPaths("tk_1")).paths).toEqual(["src/new.ts", "README.md"]);
    // Reminded once; then only a shell command ran: that is work on the task, so stop reminds again.
    expect(JSON.parse((await run("codex", "stop", { cwd: repo.dir, stop_hook_active: false })).stdout).decision).toBe("block");
    expect((await run("codex", "stop", { cwd: repo.dir, stop_hook_active: false })).stdout).toBe("");
    await fileClockPast();
    await run("codex", "post-tool-use", payload("Bash", "npm test"));
    expect((await journal.editedPaths("tk_1")).paths).toEqual(["src/new.ts", "README.md"]);
    expect(JSON.parse((await run("codex", "stop", { cwd: repo.dir, stop_hook_active: false })).stdout).decision).toBe("block");
    expect(await journal.session()).toMatchObject({
      agent: "codex",
      transcript_path: "/home/u/.codex/sessions/2026/11/27/rollout-x.jsonl",
    });
  });

  it("Codex with a session seen but no tool hook run during the task: the agent's edits are not observed, never 'none'", async () => {
    const { repo, cache, run } = await openTask();
    // SessionStart ran (the session is known), but no PostToolUse hook did: Codex skipped untrusted hooks.
    await run("codex", "session-start", { cwd: repo.dir, session_id: "s1", transcript_path: "/t/rollout.jsonl", source: "startup" });
    expect(await agentEdits(repo.dir, "tk_1", cache)).toBeUndefined();
    // Once a tool hook recorded the task's work, what it did not touch is known: a shell command alone edits nothing.
    await run("codex", "post-tool-use", {
      cwd: repo.dir,
      hook_event_name: "PostToolUse",
      tool_name: "Bash",
      tool_input: { command: "npm test" },
      tool_use_id: "c1",
    });
    expect(await agentEdits(repo.dir, "tk_1", cache)).toEqual({ paths: [] });
  });

  it("Cursor: a subagent's modified_files are recorded for the open task", async () => {
    const { repo, journal, run } = await openTask();
    const out = await run("cursor", "post-tool-use", {
      conversation_id: "c",
      generation_id: "g",
      hook_event_name: "subagentStop",
      workspace_roots: [repo.dir],
      subagent_type: "generalPurpose",
      status: "completed",
      modified_files: [join(repo.dir, "lib", "a.ts"), "lib/b.ts", "/elsewhere/c.ts"],
    });
    expect(JSON.parse(out.stdout)).toEqual({});
    expect((await journal.editedPaths("tk_1")).paths).toEqual(["lib/a.ts", "lib/b.ts"]);
  });

  it("with no task open, edits are not recorded and stop says nothing", async () => {
    const repo = Repo.init();
    const cache = tempDir("waymark-cache-");
    const options = { agent: agentCalled("claude"), version: "0.1.0", cacheDir: cache };
    await runHook(
      "post-tool-use",
      JSON.stringify({ cwd: repo.dir, tool_name: "Write", tool_input: { file_path: join(repo.dir, "x") } }),
      options,
    );
    expect(await runHook("stop", JSON.stringify({ cwd: repo.dir, stop_hook_active: false }), options)).toEqual({ stdout: "" });
    expect(await runHook("session-start", JSON.stringify({ cwd: repo.dir, source: "startup" }), options)).toEqual({ stdout: "" });
  });

  it("stop reminds once per round of edits, in each agent's format", async () => {
    const { repo, run } = await openTask();
    const edit = () =>
      run("claude", "post-tool-use", { cwd: repo.dir, tool_name: "Write", tool_input: { file_path: join(repo.dir, "a.ts") } });
    const first = JSON.parse((await run("claude", "stop", { cwd: repo.dir, stop_hook_active: false })).stdout);
    expect(first).toEqual({ decision: "block", reason: expect.stringContaining('tk_1 "Do it" in workflow wf_1') });
    expect((await run("claude", "stop", { cwd: repo.dir, stop_hook_active: false })).stdout).toBe("");
    await fileClockPast();
    await edit();
    expect((await run("claude", "stop", { cwd: repo.dir, stop_hook_active: true })).stdout).toBe("");
    expect(JSON.parse((await run("codex", "stop", { cwd: repo.dir, stop_hook_active: false })).stdout).decision).toBe("block");
    await fileClockPast();
    await edit();
    expect(JSON.parse((await run("cursor", "stop", { workspace_roots: [repo.dir], status: "aborted", loop_count: 0 })).stdout)).toEqual({});
    expect(JSON.parse((await run("cursor", "stop", { workspace_roots: [repo.dir], status: "completed", loop_count: 1 })).stdout)).toEqual(
      {},
    );
    const cursor = JSON.parse((await run("cursor", "stop", { workspace_roots: [repo.dir], status: "completed", loop_count: 0 })).stdout);
    expect(cursor.followup_message).toContain("complete_task");
  });

  it("session-start injects the open task in each agent's format, and records the transcript", async () => {
    const { repo, journal, run } = await openTask();
    const claude = JSON.parse(
      (await run("claude", "session-start", { cwd: repo.dir, session_id: "s1", transcript_path: "/t/s1.jsonl", source: "resume" })).stdout,
    );
    expect(claude.hookSpecificOutput.hookEventName).toBe("SessionStart");
    expect(claude.hookSpecificOutput.additionalContext).toContain('Open task: tk_1 "Do it" in workflow wf_1');
    expect(claude.hookSpecificOutput.additionalContext).toContain('get_workflow {"workflow_id": "wf_1"}');
    expect(await journal.session()).toMatchObject({ agent: "claude", session_id: "s1", transcript_path: "/t/s1.jsonl" });
    const cursor = JSON.parse((await run("cursor", "session-start", { workspace_roots: [repo.dir], conversation_id: "c1" })).stdout);
    expect(cursor.additional_context).toContain("tk_1");
    const codex = JSON.parse((await run("codex", "session-start", { cwd: repo.dir, session_id: "x", source: "startup" })).stdout);
    expect(codex.hookSpecificOutput.additionalContext).toContain("tk_1");
  });

  it.each(["", "null", "[1,2]", "{", '"text"'])("a payload like %j gets no answer and no error", async (input) => {
    const cache = tempDir("waymark-cache-");
    for (const event of ["session-start", "post-tool-use", "stop"] as const) {
      expect(await runHook(event, input, { agent: agentCalled("claude"), version: "0.1.0", cacheDir: cache })).toEqual({ stdout: "" });
      expect(await runHook(event, input, { agent: agentCalled("cursor"), version: "0.1.0", cacheDir: cache })).toEqual({ stdout: "{}\n" });
    }
  });
});

describe("the agent's session, from its spooled tool calls", () => {
  it("is noted when no hook that runs the helper saw it, and an older call never replaces a newer session", async () => {
    const repo = Repo.init();
    const cache = join(tempDir("waymark-xdg-"), "waymark");
    const spool = (name: string, payload: Record<string, unknown>, at: Date) => {
      mkdirSync(join(cache, "spool"), { recursive: true });
      writeFileSync(join(cache, "spool", name), JSON.stringify({ cwd: repo.dir, hook_event_name: "PostToolUse", ...payload }));
      utimesSync(join(cache, "spool", name), at, at);
    };
    const journal = new Journal(realpathSync(repo.dir), cache);
    const now = Date.now();
    spool(
      "claude.0000000001",
      { session_id: "s-new", transcript_path: "/t/new.jsonl", tool_name: "Bash", tool_input: { command: "ls" } },
      new Date(now - 1000),
    );
    await drainSpool(cache, SPOOLED_TOOL_CALLS);
    expect(await journal.session()).toMatchObject({ agent: "claude", session_id: "s-new", transcript_path: "/t/new.jsonl" });
    // A call of an earlier session, spooled before and read only now.
    spool(
      "claude.0000000002",
      { session_id: "s-old", transcript_path: "/t/old.jsonl", tool_name: "Bash", tool_input: { command: "ls" } },
      new Date(now - 60_000),
    );
    await drainSpool(cache, SPOOLED_TOOL_CALLS);
    expect((await journal.session())?.session_id).toBe("s-new");
  });
});

describe("the stop hook without Node", () => {
  const endpoint = { origin: "https://waymark.example", mcp: "https://waymark.example/mcp" };
  const stopLine = (agent: AgentName) => {
    const stop = agentHooks(agentCalled(agent), endpoint, "0.1.0").find((hook) => hook.event.toLowerCase() === "stop");
    return stop?.command ?? "";
  };

  /** The installed stop line run by sh in the repository, with `node` and `npx` replaced by a stand-in that notes it ran. */
  function setup() {
    const repo = Repo.init();
    const xdg = tempDir("waymark-xdg-");
    const cache = join(xdg, "waymark");
    const bin = tempDir("waymark-bin-");
    const mark = join(bin, "ran");
    for (const name of ["node", "npx"])
      writeFileSync(join(bin, name), `#!/bin/sh\necho "$0" >> "${mark}"; cat >/dev/null\n`, { mode: 0o755 });
    const stop = (agent: AgentName = "claude", continued = false) => {
      rmSync(mark, { force: true });
      const run = spawnSync("sh", ["-c", stopLine(agent)], {
        cwd: repo.dir,
        encoding: "utf8",
        input: JSON.stringify({ cwd: repo.dir, hook_event_name: "Stop", stop_hook_active: continued }),
        env: { PATH: `${bin}:${process.env.PATH}`, HOME: xdg, XDG_CACHE_HOME: xdg },
      });
      return { code: run.status, stdout: run.stdout, helper: existsSync(mark) };
    };
    const edit = (agent: AgentName = "claude") => {
      const line =
        agentHooks(agentCalled(agent), endpoint, "0.1.0").find((hook) => /^(PostToolUse|afterFileEdit)$/.test(hook.event))?.command ?? "";
      const payload = {
        cwd: repo.dir,
        hook_event_name: "PostToolUse",
        tool_name: "Write",
        tool_input: { file_path: join(repo.dir, "a.ts") },
      };
      const run = spawnSync("sh", ["-c", line], {
        cwd: repo.dir,
        encoding: "utf8",
        input: JSON.stringify(payload),
        env: { PATH: `${bin}:${process.env.PATH}`, HOME: xdg, XDG_CACHE_HOME: xdg },
      });
      return { code: run.status, stdout: run.stdout };
    };
    const journal = () => new Journal(realpathSync(repo.dir), cache);
    const nodeStop = () =>
      runHook("stop", JSON.stringify({ cwd: repo.dir, stop_hook_active: false }), {
        agent: agentCalled("claude"),
        version: "0.1.0",
        cacheDir: cache,
      });
    return { repo, cache, stop, edit, journal, nodeStop };
  }

  it("answers alone from the state the helper kept: nothing, or a due reminder said once; the helper when unsure", async () => {
    const { cache, stop, edit, journal, nodeStop } = setup();
    // Nothing kept yet: the helper decides.
    expect(stop()).toEqual({ code: 0, stdout: "", helper: true });
    expect((await nodeStop()).stdout).toBe("");
    expect(stop()).toEqual({ code: 0, stdout: "", helper: false });
    expect(stop("cursor")).toEqual({ code: 0, stdout: "{}\n", helper: false });

    // A task started: a reminder is due. The line says it, in the helper's words, without the helper.
    const task = { task_id: "tk_1", workflow_id: "wf_1", name: "Do it", started_at: Date.now() - 1000 };
    await journal().taskStarted(task);
    // Cursor's stop answers in another shape: its reminders stay the helper's.
    expect(stop("cursor").helper).toBe(true);
    // An agent that already continued once for a stop hook is let go, and the reminder stays due.
    expect(stop("claude", true)).toEqual({ code: 0, stdout: "", helper: false });
    const reminded = stop("codex");
    expect(reminded.helper).toBe(false);
    expect(JSON.parse(reminded.stdout)).toEqual({ decision: "block", reason: stopReminder([task]) });
    expect(stopReminder([task])).toBe(
      'Waymark: task tk_1 "Do it" in workflow wf_1 is still open. If its work is done, call complete_task with its outcome; if it continues later, say so and stop.',
    );
    // Said once: the next stop is quiet, and the helper counts the task reminded (its own stop is quiet too).
    expect(stop()).toEqual({ code: 0, stdout: "", helper: false });
    expect((await nodeStop()).stdout).toBe("");
    expect((await journal().openTasks())[0]?.reminded_at).toBeGreaterThan(task.started_at);
    expect(stop()).toEqual({ code: 0, stdout: "", helper: false });

    // An edit spooled since the reminder, with nothing saying it was this tree's (another
    // repository's agent, say): the helper decides.
    await fileClockPast();
    mkdirSync(join(cache, "spool"), { recursive: true });
    writeFileSync(join(cache, "spool", "claude.0000000001"), "{}");
    expect(stop().helper).toBe(true);
    rmSync(join(cache, "spool", "claude.0000000001"));
    await nodeStop();

    // The installed edit hook in this tree: the next stop reminds alone, then is quiet again.
    await fileClockPast();
    const edited = edit();
    expect(edited).toEqual({ code: 0, stdout: "" });
    const afterEdit = stop();
    expect(afterEdit.helper).toBe(false);
    expect(JSON.parse(afterEdit.stdout).reason).toBe(stopReminder([task]));
    expect(stop()).toEqual({ code: 0, stdout: "", helper: false });
    // The helper drains that spooled edit (dated before the reminder): nothing due.
    expect((await nodeStop()).stdout).toBe("");

    // An edit recorded by the helper itself: due again, said alone.
    await fileClockPast();
    await journal().recordEdits(["a.ts"], "Write", Date.now());
    const again = stop();
    expect(again.helper).toBe(false);
    expect(JSON.parse(again.stdout).reason).toBe(stopReminder([task]));

    // The task completed: no task open, answered alone.
    await journal().taskCompleted("tk_1", Date.now(), transcriptUsage);
    expect(stop()).toEqual({ code: 0, stdout: "", helper: false });
    // Until an edit is spooled: the helper drains the spool, as every stop did.
    await fileClockPast();
    writeFileSync(join(cache, "spool", "claude.0000000002"), "{}");
    expect(stop().helper).toBe(true);
  });

  it("a task the line reminded of stays reminded when the journal changes for another task", async () => {
    const { stop, journal } = setup();
    const first = { task_id: "tk_a", workflow_id: "wf_1", name: "First", started_at: Date.now() - 2000 };
    const second = { task_id: "tk_b", workflow_id: "wf_1", name: "Second", started_at: Date.now() - 1000 };
    await journal().taskStarted(first);
    expect(JSON.parse(stop().stdout).reason).toBe(stopReminder([first]));
    // The MCP proxy starts another task (it rewrites the stop state): only that one is due.
    await journal().taskStarted(second);
    expect(JSON.parse(stop().stdout).reason).toBe(stopReminder([second]));
    expect(stop().stdout).toBe("");
  });

  it("never answers for another repository made at the same path", async () => {
    const { repo, stop, nodeStop } = setup();
    expect((await nodeStop()).stdout).toBe("");
    expect(stop().helper).toBe(false);
    // The repository deleted and made again in the same directory.
    rmSync(join(repo.dir, ".git"), { recursive: true });
    repo.git("init", "-q");
    expect(stop().helper).toBe(true);
    expect((await nodeStop()).stdout).toBe("");
    expect(stop().helper).toBe(false);
    // The whole directory made again.
    rmSync(repo.dir, { recursive: true });
    mkdirSync(repo.dir);
    repo.git("init", "-q");
    expect(stop().helper).toBe(true);
  });
});
