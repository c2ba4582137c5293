/**
 * Provenance and repository identity at the edge, through real MCP clients: a client that sends
 * its own `changes` is recorded as "client" (only data the helper signed reads "computed by
 * waymark-helper"), usage says whether it is the transcript's or the agent's claim, and
 * resume-by-name never merges work from different repositories, nor a fingerprint-less
 * client's work with a repository's.
 */
import type { Client } from "@modelcontextprotocol/client";
import { describe, expect, it } from "vitest";
import { callTool, connect, ok } from "../support/mcp-client";
import { workerTarget } from "../support/worker";

type Started = { workflow_id: string; resumed?: boolean };
const BLOB = "a".repeat(40);
const HEAD = "c".repeat(40);
const repository = (fingerprint: string, branch = "main") => ({
  fingerprint: fingerprint.repeat(64),
  remote: "github.com/acme/app",
  branch,
});

async function task(client: Client, name: string) {
  const wf = await ok<Started>(client, "start_workflow", { name, force_new: true });
  const snapshot = { type: "git", head: HEAD, branch: "main", dirty: [], repository: repository("1") };
  return ok<{ task_id: string }>(client, "start_task", { workflow_id: wf.workflow_id, name: "T", goal: "g", snapshot });
}

const gitChanges = (extra: Record<string, unknown> = {}) => ({
  type: "git",
  start_head: HEAD,
  head: HEAD,
  committed: [],
  dirty: [
    { path: "src/agent.ts", head: null, worktree: { mode: "100644", blob: BLOB } },
    { path: "dist/bundle.js", head: null, worktree: { mode: "100644", blob: BLOB } },
  ],
  ...extra,
});

describe("provenance of files_changed and metrics", () => {
  it.each([
    ["changes a client sent itself", gitChanges(), { kind: "client" }, undefined],
    [
      "changes the helper signed",
      gitChanges({ source: { kind: "helper", version: "0.1.0" } }),
      { kind: "helper", version: "0.1.0" },
      undefined,
    ],
    [
      "helper changes with the agent's edits",
      gitChanges({ source: { kind: "helper", version: "0.1.0" }, agent_edits: { paths: ["src/agent.ts"] } }),
      { kind: "helper", version: "0.1.0" },
      ["dist/bundle.js"],
    ],
    [
      "agent edits a client claims (unsigned) prove nothing",
      gitChanges({ agent_edits: { paths: ["src/agent.ts"] } }),
      { kind: "client" },
      undefined,
    ],
  ])("%s", async (_label, changes, source, notByAgent) => {
    const client = await connect(workerTarget());
    const { task_id } = await task(client, "Provenance");
    const done = await callTool(client, "complete_task", { task_id, status: "success", outcome: { summary: "s" }, changes });
    expect(done.isError, done.text).toBe(false);
    const files = done.structured.files_changed as Record<string, unknown>;
    expect(files.source).toEqual(source);
    expect(files.not_by_agent_tools).toEqual(notByAgent);
    expect(done.text).toContain(source.kind === "helper" ? "source: computed by waymark-helper 0.1.0" : "source: reported by the client");
  });

  it.each([
    ["the agent's own figures", { input_tokens: 5 }, undefined, { source: "agent" }],
    [
      "a direct client claiming a transcript",
      { input_tokens: 5, source: "transcript", price_table_date: "2026-11-23" },
      undefined,
      { source: "agent" },
    ],
    [
      "transcript figures from the helper",
      { input_tokens: 5, source: "transcript", price_table_date: "2026-11-23" },
      { source: { kind: "helper", version: "0.1.0" } },
      { source: "transcript", price_table_date: "2026-11-23" },
    ],
  ])("usage: %s", async (_label, metrics, signed, expected) => {
    const client = await connect(workerTarget());
    const { task_id } = await task(client, "Usage provenance");
    await ok(client, "complete_task", { task_id, status: "success", outcome: { summary: "s" }, metrics, changes: gitChanges(signed) });
    const { task: view } = await ok<{ task: { metrics: Record<string, unknown>; repository: Record<string, unknown> } }>(
      client,
      "get_workflow",
      {
        task_id,
      },
    );
    expect(view.metrics).toMatchObject({ input_tokens: 5, ...expected });
    if (expected.source === "agent") expect(view.metrics.price_table_date).toBeUndefined();
    expect(view.repository).toEqual({
      fingerprint: "1".repeat(64),
      remote: "github.com/acme/app",
      branch: "main",
      start_commit: HEAD,
      end_commit: HEAD,
      dirty_at_start: 0,
    });
  });
});

describe("resume by name within one repository", () => {
  it("resumes only an open workflow of the same repository; fingerprint-less clients never join a repository's workflow", async () => {
    const client = await connect(workerTarget());
    const name = "Shared name";
    const a = await ok<Started>(client, "start_workflow", { name, repository: repository("a") });
    const b = await ok<Started>(client, "start_workflow", { name, repository: repository("b") });
    expect(b.workflow_id).not.toBe(a.workflow_id);
    expect(b.resumed).toBeUndefined();
    const aAgain = await ok<Started>(client, "start_workflow", { name, repository: repository("a", "feature") });
    expect(aAgain).toMatchObject({ workflow_id: a.workflow_id, resumed: true });
    const direct = await ok<Started>(client, "start_workflow", { name });
    expect([a.workflow_id, b.workflow_id]).not.toContain(direct.workflow_id);
    expect(direct.resumed).toBeUndefined();
    const directAgain = await ok<Started>(client, "start_workflow", { name });
    expect(directAgain).toMatchObject({ workflow_id: direct.workflow_id, resumed: true });
    const { workflow } = await ok<{ workflow: { repository: unknown } }>(client, "get_workflow", { workflow_id: a.workflow_id });
    expect(workflow.repository).toEqual(repository("a"));
  });

  it("refuses a malformed fingerprint by field and rule", async () => {
    const client = await connect(workerTarget());
    const result = await callTool(client, "start_workflow", {
      name: "Bad fingerprint",
      repository: { fingerprint: "xyz", remote: null, branch: null },
    });
    expect(result.isError).toBe(true);
    expect(result.text).toContain("repository.fingerprint");
  });

  it("does not advertise the helper-only input in tools/list", async () => {
    const client = await connect(workerTarget());
    const { tools } = await client.listTools();
    const start = tools.find((t) => t.name === "start_workflow");
    expect(Object.keys(start?.inputSchema.properties ?? {})).not.toContain("repository");
  });
});
