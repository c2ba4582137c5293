import { spawnSync } from "node:child_process";
import { appendFileSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { clockPast } from "../../test/support/eventually.js";
import { awaitTranscriptLine, CALLING_RESPONSE_WAIT_MS } from "../src/usage/transcript.js";
import { agentCalled, cleanupTempDirs, Repo, tempDir } from "./fixtures.js";
import { BIN, ensureBuilt, FakeRemote, SYSTEM_NODE } from "./support.js";

// Claude Code writes a model response to its transcript 100–250 ms after it ran the response's
// tool calls (measured with Claude Code 2.1.328); Codex 0.169 writes a response's usage when its
// stream ends, after it may have run the call (observed in its rollout): usage read at
// complete_task must wait for the response that called it, or that response is missing.

afterAll(cleanupTempDirs);

/** A Claude Code transcript line: one model response, its tool call and its usage. */
function response(at: number, id: string, usage: { input: number; output: number }, toolUseId?: string, name = "Bash"): string {
  return JSON.stringify({
    type: "assistant",
    timestamp: new Date(at).toISOString(),
    requestId: `req_${id}`,
    uuid: `uuid-${id}`,
    message: {
      id,
      type: "message",
      role: "assistant",
      model: "claude-sonnet-4-5-20250929",
      content: toolUseId ? [{ type: "tool_use", id: toolUseId, name, input: {} }] : [{ type: "text", text: "…" }],
      usage: { input_tokens: usage.input, output_tokens: usage.output, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 },
    },
  });
}

describe("awaitTranscriptLine (the calling response, written after the call ran)", () => {
  const dir = tempDir("waymark-timing-");
  const id = "toolu_01CallingResponse";
  const claudeCall = agentCalled("claude").transcript?.callingResponseWritten;
  const codexCall = agentCalled("codex").transcript?.callingResponseWritten;
  if (!claudeCall || !codexCall) throw new Error("Claude Code and Codex both have transcripts");
  const written = (line: string) => claudeCall(id)(line);

  it("waits for a line written later, even in pieces cut inside a multi-byte character", async () => {
    const path = join(dir, "late.jsonl");
    writeFileSync(path, `${response(Date.now(), "msg_0", { input: 1, output: 1 })}\n`);
    const line = Buffer.from(`${response(Date.now(), "msg_1", { input: 2, output: 2 }, id).replace("…", "…€")}\n`);
    const cut = line.indexOf(Buffer.from("€")) + 1;
    const started = Date.now();
    setTimeout(() => appendFileSync(path, line.subarray(0, cut)), 150);
    setTimeout(() => appendFileSync(path, line.subarray(cut)), 300);
    expect(await awaitTranscriptLine(path, written, 3000)).toBe(true);
    expect(Date.now() - started).toBeGreaterThanOrEqual(290);
  });

  it("does not take the tool result (tool_use_id) for the response, and gives up at its bound", async () => {
    const path = join(dir, "never.jsonl");
    const result = JSON.stringify({
      type: "user",
      message: { content: [{ type: "tool_result", tool_use_id: id, content: "ok" }] },
      usage: {},
    });
    writeFileSync(path, `${result}\n${response(Date.now(), "msg_0", { input: 1, output: 1 }, "toolu_other")}\n`);
    const started = Date.now();
    expect(await awaitTranscriptLine(path, written, 300)).toBe(false);
    const took = Date.now() - started;
    expect(took).toBeGreaterThanOrEqual(300);
    expect(took).toBeLessThan(1000);
  });

  it("skips a line longer than any usage line (a big tool result naming the call)", async () => {
    const path = join(dir, "big.jsonl");
    writeFileSync(path, `{"usage":1,"content":"${"x".repeat(5 * 1024 * 1024)} \\"id\\":\\"${id}\\" ","id":"${id}"}\n`);
    expect(await awaitTranscriptLine(path, written, 200)).toBe(false);
    appendFileSync(path, `${response(Date.now(), "msg_1", { input: 2, output: 2 }, id)}\n`);
    expect(await awaitTranscriptLine(path, written, 200)).toBe(true);
  });

  it("Codex: waits for the usage record after the call's item, not one before it, nor the call's output", async () => {
    const path = join(dir, "rollout.jsonl");
    const call = "call_5d1a203fec85eba42eac9d40";
    const item = (payload: Record<string, unknown>) =>
      JSON.stringify({ timestamp: new Date().toISOString(), type: "response_item", payload });
    const usage = JSON.stringify({
      timestamp: new Date().toISOString(),
      type: "token_usage_record",
      payload: { turn_id: "t1", response_id: "resp_2", usage: { input_tokens: 10, output_tokens: 2 } },
    });
    // A usage record before the call's item is an earlier response's.
    writeFileSync(
      path,
      `${usage}\n${item({ type: "function_call", name: "complete_task", namespace: "mcp__waymark", arguments: "{}", call_id: call })}\n`,
    );
    expect(await awaitTranscriptLine(path, codexCall(call), 200)).toBe(false);
    const started = Date.now();
    setTimeout(() => appendFileSync(path, `${usage}\n`), 300);
    expect(await awaitTranscriptLine(path, codexCall(call), 3000)).toBe(true);
    expect(Date.now() - started).toBeGreaterThanOrEqual(290);
    // The call's output names the call too: it is not its item.
    const other = join(dir, "rollout-output.jsonl");
    writeFileSync(other, `${item({ type: "function_call_output", call_id: call, output: "ok" })}\n${usage}\n`);
    expect(await awaitTranscriptLine(other, codexCall(call), 200)).toBe(false);
  });

  it("answers false at once for a transcript that does not exist", async () => {
    const started = Date.now();
    expect(await awaitTranscriptLine(join(dir, "missing.jsonl"), written, 2000)).toBe(false);
    expect(Date.now() - started).toBeLessThan(200);
  });
});

describe("complete_task through the helper, with the calling response written 300 ms after the call", () => {
  const TOKEN = "timing-token";
  const SESSION = "7c1d2e3f-0000-4000-8000-00000000a001";
  let remote: FakeRemote;
  let repo: Repo;
  let cache: string;
  let transcript: string;

  beforeAll(async () => {
    ensureBuilt();
    remote = new FakeRemote(TOKEN);
    await remote.start();
    repo = Repo.init();
    repo.write("README.md", "# timing\n");
    repo.commitAll("initial");
    cache = tempDir("waymark-timing-cache-");
    transcript = join(tempDir("waymark-timing-home-"), `${SESSION}.jsonl`);
    mkdirSync(join(transcript, ".."), { recursive: true });
    writeFileSync(transcript, "");
  });
  afterAll(async () => {
    await remote?.stop();
  });

  function env(): Record<string, string> {
    const base: Record<string, string> = {};
    for (const [k, v] of Object.entries(process.env)) if (v !== undefined && !k.startsWith("WAYMARK_")) base[k] = v;
    return { ...base, XDG_CACHE_HOME: cache, WAYMARK_TOKEN: TOKEN };
  }

  async function session(): Promise<Client> {
    // The session-start hook tells the helper which transcript this Claude Code session writes.
    const hook = spawnSync(SYSTEM_NODE, [BIN, "hook", "session-start", "--agent", "claude"], {
      cwd: repo.dir,
      env: env(),
      encoding: "utf8",
      input: JSON.stringify({
        session_id: SESSION,
        transcript_path: transcript,
        cwd: repo.dir,
        hook_event_name: "SessionStart",
        source: "startup",
      }),
    });
    expect(hook.status, hook.stderr).toBe(0);
    const client = new Client({ name: "claude-code-like", version: "1.0.0" });
    await client.connect(
      new StdioClientTransport({
        command: SYSTEM_NODE,
        args: [BIN, "mcp", "--url", remote.url],
        cwd: repo.dir,
        env: env(),
        stderr: "pipe",
      }),
    );
    return client;
  }

  async function task(client: Client): Promise<string> {
    const started = await client.callTool({ name: "start_task", arguments: { workflow_id: "wf-1", name: "Timing", goal: "usage" } });
    expect(started.isError).toBeFalsy();
    const taskId = (started.structuredContent as { task_id: string }).task_id;
    // The response below is stamped after the task started.
    await clockPast(Date.now());
    appendFileSync(transcript, `${response(Date.now(), `msg_${taskId}_a`, { input: 100, output: 10 }, `toolu_${taskId}_bash`)}\n`);
    return taskId;
  }

  it("includes the response that called complete_task (Claude Code names the call in _meta)", async () => {
    const client = await session();
    try {
      const taskId = await task(client);
      const toolUseId = `toolu_${taskId}_complete`;
      // Claude Code stamps the response before it runs the call, and writes it afterwards.
      const stamped = Date.now();
      setTimeout(
        () =>
          appendFileSync(
            transcript,
            `${response(stamped, `msg_${taskId}_b`, { input: 200, output: 20 }, toolUseId, "mcp__waymark__complete_task")}\n`,
          ),
        300,
      );
      const done = await client.callTool({
        name: "complete_task",
        arguments: { task_id: taskId, status: "success", outcome: { summary: "done" } },
        _meta: { "claudecode/toolUseId": toolUseId },
      });
      expect(done.isError).toBeFalsy();
      const sent = remote.calls("complete_task").find((call) => call.args.task_id === taskId);
      expect(sent?.args.metrics).toMatchObject({ input_tokens: 300, output_tokens: 30, source: "transcript" });
    } finally {
      await client.close();
    }
  });

  it("without a call id (another agent) it reads at once: the wait costs nothing there", async () => {
    const client = await session();
    try {
      const taskId = await task(client);
      const started = Date.now();
      const done = await client.callTool({
        name: "complete_task",
        arguments: { task_id: taskId, status: "success", outcome: { summary: "done" } },
      });
      expect(done.isError).toBeFalsy();
      expect(Date.now() - started).toBeLessThan(CALLING_RESPONSE_WAIT_MS);
      const sent = remote.calls("complete_task").find((call) => call.args.task_id === taskId);
      expect(sent?.args.metrics).toMatchObject({ input_tokens: 100, output_tokens: 10, source: "transcript" });
    } finally {
      await client.close();
    }
  });
});
