/**
 * The workflow resource has a ceiling: each array holds its first page, `truncated` names the
 * next page of each array that has more, and following the pages gives the whole view back.
 */
import type { Client } from "@modelcontextprotocol/client";
import { describe, expect, it } from "vitest";
import { newWorkflowId } from "../../src/ids";
import { LIMITS } from "../../src/limits";
import { connect } from "../support/mcp-client";
import { rpc, TOKENS, workerTarget } from "../support/worker";
import { readWhole, stubFor, value } from "../workflow/rpc";

const ACME = "acme";
type Contents = { contents: { uri: string; text?: string }[] };

async function read<T>(client: Client, uri: string): Promise<T> {
  const result = (await client.readResource({ uri })) as Contents;
  return JSON.parse(result.contents[0]?.text ?? "null") as T;
}

async function readError(uri: string, token: string = TOKENS.acme): Promise<{ code: number; message: string }> {
  const { body } = await rpc({ jsonrpc: "2.0", id: 9, method: "resources/read", params: { uri } }, { token });
  return body?.error as { code: number; message: string };
}

async function workflowOf(tasks: number) {
  const id = newWorkflowId();
  const stub = stubFor(id);
  value(await stub.startWorkflow(ACME, id, { name: `${tasks} tasks`, plan: [{ step: "1", goal: "g" }] }));
  for (let i = 0; i < tasks; i++) {
    const task = value(await stub.startTask(ACME, { workflow_id: id, name: `Task ${i}`, goal: "g" })).task_id;
    if (i % 2 === 0)
      value(await stub.logDecision(ACME, { task_id: task, category: "other", question: `Q${i}`, chosen: "a", reasoning: "b" }));
    value(await stub.completeTask(ACME, { task_id: task, status: "success", outcome: { summary: `done ${i}` } }));
  }
  return { id, stub };
}

type Truncated = Partial<Record<"tasks" | "decisions" | "issues" | "milestones", { next_cursor: string; next: string }>> & { how?: string };

describe("the workflow resource's ceiling", () => {
  it("is the whole view, unchanged, while every array fits one page", async () => {
    const { id, stub } = await workflowOf(3);
    const client = await connect(workerTarget());
    expect(await read(client, `waymark://workflows/${id}`)).toEqual(JSON.parse(JSON.stringify(value(await readWhole(stub, ACME)))));
  });

  it("gives each array's first page, names the next pages, and the pages give the whole view back", { timeout: 120_000 }, async () => {
    const { id, stub } = await workflowOf(LIMITS.READ_PAGE_ITEMS * 2 + 30);
    const client = await connect(workerTarget());
    const uri = `waymark://workflows/${id}`;
    const resource = await read<Record<string, unknown[]> & { truncated: Truncated; totals: { tasks: number } }>(client, uri);
    expect(resource.tasks).toHaveLength(LIMITS.READ_PAGE_ITEMS);
    expect(resource.decisions).toHaveLength(LIMITS.READ_PAGE_ITEMS);
    expect(resource.totals.tasks).toBe(LIMITS.READ_PAGE_ITEMS * 2 + 30);
    expect(Object.keys(resource.truncated).sort()).toEqual(["decisions", "how", "tasks"]);
    expect(resource.truncated.how).toMatch(/first page only: read its `next` URI/);
    expect(resource.truncated.tasks?.next).toBe(`${uri}/tasks?cursor=${resource.truncated.tasks?.next_cursor}`);

    const whole = JSON.parse(JSON.stringify(value(await readWhole(stub, ACME)))) as Record<string, unknown[]>;
    for (const kind of ["tasks", "decisions"] as const) {
      const rows = [...(resource[kind] ?? [])];
      let pages = 1;
      for (let next: string | null = resource.truncated[kind]?.next ?? null; next !== null; pages++) {
        const page = await read<Record<string, unknown[]> & { next: string | null; next_cursor: string | null }>(client, next);
        expect(page[kind]?.length).toBeLessThanOrEqual(LIMITS.READ_PAGE_ITEMS);
        rows.push(...(page[kind] ?? []));
        next = page.next;
      }
      expect(rows).toEqual(whole[kind]);
      expect(pages).toBe(kind === "tasks" ? 3 : 2);
    }
  });

  it("refuses a bad cursor, an unknown parameter and another account's pages clearly", async () => {
    const { id } = await workflowOf(1);
    const base = `waymark://workflows/${id}/tasks`;
    const bad = await readError(`${base}?cursor=not-a-cursor`);
    expect(bad.code).toBe(-32602);
    expect(bad.message).toContain("INPUT_VALIDATION_ERROR: cursor: not a cursor this read gave out");
    expect((await readError(`${base}?after=3`)).message).toContain("unknown parameter(s): after; accepted: cursor");
    for (const uri of [base, `waymark://workflows/${id}/milestones`, `waymark://workflows/${id}`]) {
      expect((await readError(uri, TOKENS.globex)).message).toContain(`NOT_FOUND: no workflow ${id} in this account`);
    }
    // An array that is not paged is no resource at all.
    expect((await readError(`waymark://workflows/${id}/feedback`)).code).toBeLessThan(0);
  });
});
