/**
 * The deployment's meter (src/meter.ts): GET /meter answers only where WAYMARK_METER=1, and then
 * counts what a tool call cost as the storage reports it: a log write's rows written in the
 * workflow object, its one object request, the Worker request itself, and its statements.
 */
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import app from "../../src/index";
import { connect, ok } from "../support/mcp-client";
import { ORIGIN, TOKENS } from "../support/worker";

const METERED = { ...env, WAYMARK_METER: "1" };
const get = (path: string, bindings: Env) =>
  app.fetch(new Request(`${ORIGIN}${path}`, { headers: { Host: new URL(ORIGIN).host } }), bindings);

interface Reading {
  worker_requests: number;
  objects: Record<string, { requests: number; rows_written: number; statements: number; written_by_table: Record<string, number> }>;
}

/** An MCP client whose requests reach the Worker with metering on. */
function meteredClient() {
  return connect({
    url: ORIGIN,
    token: TOKENS.acme,
    fetch: async (input: string | URL | Request, init?: RequestInit) => app.fetch(new Request(input, init), METERED),
  });
}

describe("GET /meter", () => {
  it("is not found where the deployment does not meter itself", async () => {
    expect((await get("/meter", env)).status).toBe(404);
  });

  it("counts a log write's Worker request, object request and rows written", async () => {
    const client = await meteredClient();
    const { workflow_id } = await ok<{ workflow_id: string }>(client, "start_workflow", { name: "Metered" });
    const { task_id } = await ok<{ task_id: string }>(client, "start_task", { workflow_id, name: "T", goal: "g" });
    const read = async () => (await (await get("/meter", METERED)).json()) as Reading;
    const before = await read();
    await ok(client, "log_milestone", { task_id, message: "m" });
    const after = await read();
    // The tool call and the second reading.
    expect(after.worker_requests - before.worker_requests).toBe(2);
    expect(after.objects.workflow?.requests).toBe((before.objects.workflow?.requests ?? 0) + 1);
    const written = (after.objects.workflow?.rows_written ?? 0) - (before.objects.workflow?.rows_written ?? 0);
    expect(written).toBeGreaterThan(0);
    expect(after.objects.workflow?.statements).toBeGreaterThan(before.objects.workflow?.statements ?? 0);
    // Each row written is charged to the table its statement names, and they add up to the total.
    const byTable = (r: Reading) => r.objects.workflow?.written_by_table ?? {};
    const added = Object.entries(byTable(after)).map(([table, n]) => [table, n - (byTable(before)[table] ?? 0)] as const);
    expect(Object.fromEntries(added.filter(([, n]) => n > 0))).toHaveProperty("events", 1);
    expect(added.reduce((sum, [, n]) => sum + n, 0)).toBe(written);
  });

  it("counts two statements for a log write on a task the object started or counted: the insert, the event (the task, its count and the totals are not read back)", async () => {
    const client = await meteredClient();
    const { workflow_id } = await ok<{ workflow_id: string }>(client, "start_workflow", { name: "Three statements" });
    const { task_id } = await ok<{ task_id: string }>(client, "start_task", { workflow_id, name: "T", goal: "g" });
    const statements = async () => ((await (await get("/meter", METERED)).json()) as Reading).objects.workflow?.statements ?? 0;
    // A task this object instance started has no entries to count: its first milestone reads neither its task nor its log.
    for (const message of ["first", "second", "third"]) {
      const before = await statements();
      await ok(client, "log_milestone", { task_id, message });
      expect({ message, statements: (await statements()) - before }).toEqual({ message, statements: 2 });
    }
  });
});
