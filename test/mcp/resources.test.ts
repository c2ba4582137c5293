import { describe, expect, it } from "vitest";
import { connect, ok } from "../support/mcp-client";
import { accountIndexed, rpc, TOKENS, workerTarget } from "../support/worker";

type Contents = { contents: { uri: string; mimeType?: string; text?: string }[] };
const parse = <T>(result: Contents): T => JSON.parse(result.contents[0]?.text ?? "null") as T;

/** resources/read over raw JSON-RPC, for the error cases: returns the JSON-RPC error. */
async function readError(uri: string, token: string = TOKENS.acme): Promise<{ code: number; message: string }> {
  const { body } = await rpc({ jsonrpc: "2.0", id: 7, method: "resources/read", params: { uri } }, { token });
  expect(body?.result, uri).toBeUndefined();
  return body?.error as { code: number; message: string };
}

describe("MCP resources", () => {
  it("lists the account's workflows and the server info; reads a workflow as its view", async () => {
    const client = await connect(workerTarget());
    const wf = await ok<{ workflow_id: string }>(client, "start_workflow", { name: "Resourceful" });
    await ok(client, "start_task", { workflow_id: wf.workflow_id, name: "T", goal: "g" });
    // The list comes from the account index, which counts the open task within half a second.
    await accountIndexed(wf.workflow_id);
    const { resources } = await client.listResources();
    const uris = resources.map((r) => r.uri);
    expect(uris).toContain("waymark://server/info");
    const entry = resources.find((r) => r.uri === `waymark://workflows/${wf.workflow_id}`);
    expect(entry).toMatchObject({ name: "Resourceful", mimeType: "application/json" });
    expect(entry?.description).toContain("1 open task(s)");

    const view = parse<{ workflow: { id: string; name: string }; tasks: unknown[]; totals: { tasks: number }; last_seq: number }>(
      (await client.readResource({ uri: `waymark://workflows/${wf.workflow_id}` })) as Contents,
    );
    expect(view.workflow).toMatchObject({ id: wf.workflow_id, name: "Resourceful" });
    expect(view.totals.tasks).toBe(1);
    expect(view.last_seq).toBe(2);

    const { resourceTemplates } = await client.listResourceTemplates();
    expect(resourceTemplates.map((t) => t.uriTemplate).sort()).toEqual([
      "waymark://review/{id}",
      "waymark://workflows/{id}",
      "waymark://workflows/{id}/events{?from_seq,limit}",
      "waymark://workflows/{id}/tasks/{task_id}/files/{list}{?cursor}",
      "waymark://workflows/{id}/{kind}{?cursor}",
    ]);
  });

  it("follows the event log with a from_seq → next_seq cursor, in bounded pages", async () => {
    const client = await connect(workerTarget());
    const wf = await ok<{ workflow_id: string }>(client, "start_workflow", { name: "Followed" });
    const task = await ok<{ task_id: string }>(client, "start_task", { workflow_id: wf.workflow_id, name: "T", goal: "g" });
    for (let i = 0; i < 5; i++) await ok(client, "log_milestone", { task_id: task.task_id, message: `m${i}` });
    type Page = { events: { seq: number; type: string }[]; next_seq: number; has_more: boolean };
    const base = `waymark://workflows/${wf.workflow_id}/events`;

    const all = parse<Page>((await client.readResource({ uri: base })) as Contents);
    expect(all.events.map((e) => e.seq)).toEqual([1, 2, 3, 4, 5, 6, 7]);
    expect(all).toMatchObject({ next_seq: 7, has_more: false });

    const seen: number[] = [];
    let cursor = 0;
    for (;;) {
      const page = parse<Page>((await client.readResource({ uri: `${base}?from_seq=${cursor}&limit=3` })) as Contents);
      seen.push(...page.events.map((e) => e.seq));
      cursor = page.next_seq;
      if (!page.has_more) break;
    }
    expect(seen).toEqual([1, 2, 3, 4, 5, 6, 7]);

    // Either parameter alone, in any order.
    expect(parse<Page>((await client.readResource({ uri: `${base}?from_seq=5` })) as Contents).events.map((e) => e.seq)).toEqual([6, 7]);
    expect(parse<Page>((await client.readResource({ uri: `${base}?limit=2&from_seq=1` })) as Contents).events.map((e) => e.seq)).toEqual([
      2, 3,
    ]);
    // Caught up: an empty page, the cursor stays.
    expect(parse<Page>((await client.readResource({ uri: `${base}?from_seq=7` })) as Contents)).toEqual({
      events: [],
      next_seq: 7,
      has_more: false,
    });
  });

  it.each([
    ["?from_seq=-1", "from_seq: must be a whole number from 0 to"],
    ["?from_seq=abc", 'from_seq: must be a whole number from 0 to 9007199254740991, got "abc"'],
    ["?from_seq=99", "from_seq: 99 is beyond the last event (seq 1)"],
    ["?limit=0", "limit: must be a whole number from 1 to 500"],
    ["?limit=501", "limit: must be a whole number from 1 to 500"],
    ["?after=3", "unknown parameter(s): after; accepted: from_seq, limit"],
  ])("refuses a bad cursor %s with a clear error", async (query, message) => {
    const client = await connect(workerTarget());
    const wf = await ok<{ workflow_id: string }>(client, "start_workflow", { name: `Cursor ${query}` });
    const error = await readError(`waymark://workflows/${wf.workflow_id}/events${query}`);
    expect(error.code).toBe(-32602);
    expect(error.message).toContain(`INPUT_VALIDATION_ERROR: ${message}`);
  });

  it("answers unknown, malformed and other accounts' workflows as not found", async () => {
    const client = await connect(workerTarget());
    const wf = await ok<{ workflow_id: string }>(client, "start_workflow", { name: "Private" });
    for (const uri of [
      "waymark://workflows/wf_aaaaaaaaaaaaaaaaaaaa",
      "waymark://workflows/not-an-id",
      "waymark://workflows/wf_aaaaaaaaaaaaaaaaaaaa/events",
    ]) {
      const error = await readError(uri);
      expect(error.code).toBe(-32602);
      expect(error.message).toContain("NOT_FOUND");
    }
    for (const uri of [`waymark://workflows/${wf.workflow_id}`, `waymark://workflows/${wf.workflow_id}/events`]) {
      const error = await readError(uri, TOKENS.globex);
      expect(error.message).toContain(`NOT_FOUND: no workflow ${wf.workflow_id} in this account`);
    }
    const globex = await connect(workerTarget(TOKENS.globex));
    const { resources } = await globex.listResources();
    expect(resources.map((r) => r.uri)).not.toContain(`waymark://workflows/${wf.workflow_id}`);
  });

  it("describes the server at waymark://server/info (also for SDK v1 clients)", async () => {
    const client = await connect(workerTarget(), { sdk: "v1" });
    const result = (await client.readResource({ uri: "waymark://server/info" })) as Contents;
    const info = parse<{
      server: { name: string; version: string };
      protocol_versions: string[];
      features: { tools: string[]; webhooks: { events: string[] } };
      limits: Record<string, number>;
    }>(result);
    expect(info.server).toEqual({ name: "waymark", version: "0.1.0" });
    expect(info.protocol_versions).toContain("2025-06-18");
    expect(info.features.tools).toHaveLength(8);
    expect(info.features.webhooks.events).toEqual([
      "issue.needs_review",
      "task.failed",
      "workflow.completed",
      "task.review_requested",
      "feedback.created",
    ]);
    expect(info.limits).toMatchObject({ max_input_bytes: 8 * 1024 * 1024, tool_count: 8, events_page: 500, tasks_per_workflow: 5000 });
  });
});
