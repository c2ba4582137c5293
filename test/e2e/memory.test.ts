import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type DevServer, startDevServer } from "../support/dev-server";
import { eventually } from "../support/eventually";
import { type CallableClient, callTool, connect as connectTo } from "../support/mcp-client";

/** Memory, resume and resources end to end: wrangler dev with data on disk, across a restart. */
let server: DevServer;

beforeAll(async () => {
  server = await startDevServer();
});
afterAll(async () => {
  await server?.stop();
});

const connect = () => connectTo(server, { negotiation: "auto", name: "e2e-memory" });
const tool = (client: CallableClient, name: string, args: Record<string, unknown>) => callTool(client, name, args, { mustSucceed: true });

describe("memory, resume and resources through wrangler dev", () => {
  it("remembers decisions across a restart and offers them to a new task; resumes by name; follows events", async () => {
    let client = await connect();
    const first = (await tool(client, "start_workflow", { name: "Search feature" })).structured as { workflow_id: string };
    const task = (await tool(client, "start_task", { workflow_id: first.workflow_id, name: "Index documents", goal: "Full-text index" }))
      .structured as { task_id: string };
    await tool(client, "log_decision", {
      task_id: task.task_id,
      category: "architecture",
      question: "Which full-text engine?",
      chosen: "SQLite FTS5 with bm25",
      reasoning: "Already in the Durable Object",
    });
    await client.close();

    // Restarted before the decision's push (due within 2 s) could run: the push timer died with
    // the process, and the outbox's alarm (set with the write, due within 10 s) catches the index up.
    await server.restart();
    client = await connect();
    await eventually(
      "the decision reaches the account index after the restart",
      async () => {
        const found = await fetch(`${server.url}/api/search?q=fts5`, { headers: { Authorization: `Bearer ${server.token}` } });
        const body = (await found.json()) as { results: unknown[] };
        return body.results.length > 0 ? body : null;
      },
      20_000,
    );

    const again = await tool(client, "start_workflow", { name: "search FEATURE" });
    expect(again.structured).toMatchObject({ workflow_id: first.workflow_id, resumed: true });
    expect(again.text).toContain("An open workflow with this name exists");

    const other = (await tool(client, "start_workflow", { name: "Docs site" })).structured as { workflow_id: string };
    const started = await tool(client, "start_task", {
      workflow_id: other.workflow_id,
      name: "Site search",
      goal: "Full-text search of docs",
    });
    expect(started.structured.related).toEqual([
      { kind: "decision", task_id: task.task_id, workflow_id: first.workflow_id, text: "Which full-text engine? → SQLite FTS5 with bm25" },
    ]);

    const search = await fetch(`${server.url}/api/search?q=${encodeURIComponent('fts5 "bm25')}`, {
      headers: { Authorization: `Bearer ${server.token}` },
    });
    expect(((await search.json()) as { results: { id: string }[] }).results.length).toBe(1);

    const page = (await client.readResource({ uri: `waymark://workflows/${first.workflow_id}/events?from_seq=1` })) as {
      contents: { text: string }[];
    };
    const events = JSON.parse(page.contents[0]?.text ?? "{}") as { events: { type: string }[]; next_seq: number; has_more: boolean };
    expect(events.events.map((e) => e.type)).toEqual(["task.started", "decision.logged"]);
    expect(events).toMatchObject({ next_seq: 3, has_more: false });
    await client.close();
    // A restart of wrangler dev: seconds on an idle machine, tens of them on a busy one. A hang detector.
  }, 120_000);
});
