import { runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { type ChainedEvent, verifyChain } from "@waymark/protocol/chain";
import { describe, expect, it } from "vitest";
import type { AccountObject } from "../../src/account/account-object";
import { newWorkflowId } from "../../src/ids";
import { LIMITS } from "../../src/limits";
import type { FeedbackRecords } from "../../src/workflow/feedback";
import { FILE_CHANGES } from "../../src/workflow/task-files";
import type { WorkflowObject } from "../../src/workflow/workflow-object";
import type { WithFeedback } from "../../src/workflow/writer";
import { file } from "../domain/fixtures";
import { clockPast, eventually } from "../support/eventually";
import { callTool, connect } from "../support/mcp-client";
import { ON_PAGE, workerTarget } from "../support/worker";
import { failure, pushToAccount, readWhole, setStoredTotals, storedTotals, stubFor, value } from "./rpc";

// Quotas, retention and ownership rules of the WorkflowObject, exercised through its RPC
// methods as the MCP layer calls them.

const ACME = "acme";
const GLOBEX = "globex";

async function newTask(account = ACME) {
  const id = newWorkflowId();
  const stub = stubFor(id);
  value(await stub.startWorkflow(account, id, { name: `Limits ${id}` }));
  const task = value(await stub.startTask(account, { workflow_id: id, name: "T", goal: "G" }));
  return { id, stub, taskId: task.task_id };
}

/** Sets stored totals (workflow/totals) as a write would have left them. */
async function setTotals(stub: DurableObjectStub<WorkflowObject>, fields: Record<string, number>): Promise<void> {
  await runInDurableObject(stub, async (instance, state) => setStoredTotals(state.storage.sql, fields, instance));
}

async function totalsNow(stub: DurableObjectStub<WorkflowObject>): Promise<Record<string, number | null>> {
  return runInDurableObject(stub, async (_i, state) => storedTotals(state.storage.sql));
}

async function exec<T>(stub: DurableObjectStub<WorkflowObject>, query: string, ...params: (string | number)[]): Promise<T[]> {
  return runInDurableObject(stub, async (_i, state) => state.storage.sql.exec(query, ...params).toArray() as T[]);
}

describe("idempotency records", () => {
  it("never replay a stored result to another account, nor reveal that the key exists", async () => {
    const { stub, taskId } = await newTask();
    const input = { task_id: taskId, message: "secret progress", idempotency_key: "k-shared-1" };
    const first = value(await stub.logMilestone(ACME, input));
    // The attacker knows (or guesses) the task id and the key, and replays the same request.
    const attack = failure(await stub.logMilestone(GLOBEX, input));
    expect(attack.code).toBe("NOT_FOUND");
    expect(attack.message).not.toContain(first.id);
    // A different request under the same key answers exactly like an unknown task would.
    const probe = failure(await stub.logMilestone(GLOBEX, { ...input, message: "other" }));
    expect(probe).toEqual({ code: "NOT_FOUND", message: `task_id: no workflow or task ${taskId} in this account` });
  });

  it("expire: past the retention a key can be used again", async () => {
    const { stub, taskId } = await newTask();
    const first = value(await stub.logMilestone(ACME, { task_id: taskId, message: "one", idempotency_key: "k-expire" }));
    expect(value(await stub.logMilestone(ACME, { task_id: taskId, message: "one", idempotency_key: "k-expire" })).id).toBe(first.id);
    await exec(stub, "UPDATE idempotency SET created_at = ?", Date.now() - LIMITS.IDEMPOTENCY_TTL_MS - 1);
    const later = value(await stub.logMilestone(ACME, { task_id: taskId, message: "two", idempotency_key: "k-expire" }));
    expect(later.id).not.toBe(first.id);
  });
});

describe("quotas", () => {
  it("refuse new work past the workflow's event quota with QUOTA_EXCEEDED, store nothing, and still let tasks complete", async () => {
    const { id, stub, taskId } = await newTask();
    await setTotals(stub, { events: LIMITS.WORKFLOW_EVENTS });
    const before = (await exec<{ n: number }>(stub, "SELECT count(*) AS n FROM events"))[0]?.n;
    const refused = failure(
      await stub.logDecision(ACME, { task_id: taskId, category: "other", question: "Q", chosen: "A", reasoning: "R" }),
    );
    expect(refused.code).toBe("QUOTA_EXCEEDED");
    expect(refused.message).toMatch(/^workflow: at most 100000 events per workflow/);
    // The running tasks as the object keeps them in memory (read once), then a start that rolls back.
    const open = async () => value(await stub.resume(ACME, 5, false)).open_tasks.map((task) => task.task_id);
    expect(await open()).toEqual([taskId]);
    expect(failure(await stub.startTask(ACME, { workflow_id: id, name: "More", goal: "G" })).code).toBe("QUOTA_EXCEEDED");
    const after = (await exec<{ n: number }>(stub, "SELECT count(*) AS n FROM events"))[0]?.n;
    expect(after).toBe(before);
    expect(await open()).toEqual([taskId]);
    value(await stub.completeTask(ACME, { task_id: taskId, status: "success", outcome: { summary: "Done anyway." } }));
    value(await stub.completeWorkflow(ACME, { workflow_id: id, status: "success", summary: "Closed." }));
  });

  it("count at least every byte the workflow's rows keep, agent text in UTF-8 included", async () => {
    const { id, stub, taskId } = await newTask();
    // Text of two and three bytes a character: its UTF-16 length is half or a third of what is stored.
    const text = (n: number) => "é漢".repeat(n);
    for (let i = 0; i < 20; i++) {
      value(
        await stub.logDecision(ACME, {
          task_id: taskId,
          category: "other",
          question: text(200),
          chosen: text(50),
          reasoning: text(400),
          options_considered: [text(20), text(5)],
        }),
      );
      value(await stub.logIssue(ACME, { task_id: taskId, type: "other", description: text(300), resolution: text(100) }));
      value(await stub.logMilestone(ACME, { task_id: taskId, message: text(100), metadata: { note: text(50) } }));
      value(await stub.logMilestone(ACME, { task_id: taskId, message: "m" }));
    }
    value(
      await stub.completeTask(ACME, {
        task_id: taskId,
        status: "success",
        outcome: { summary: text(500) },
        changes: {
          type: "checksum",
          transitions: Array.from({ length: 50 }, (_, n) => `src/${text(3)}/${n}.ts`).map((path) => ({
            path,
            before: null,
            after: file(path),
          })),
        },
      }),
    );
    value(await stub.addFeedback(ACME, { target: "workflow", target_id: id, verdict: "comment", body: text(300), ...ON_PAGE }));
    const { counted, kept } = await runInDurableObject(stub, async (_i, state) => {
      const sql = state.storage.sql;
      const tables = sql
        .exec<{ name: string }>("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite%' AND name NOT LIKE '_cf%'")
        .toArray()
        .map((t) => t.name);
      const encoder = new TextEncoder();
      const bytes = (v: unknown) =>
        typeof v === "string" ? encoder.encode(v).length : v instanceof ArrayBuffer ? v.byteLength : v === null ? 0 : 8;
      const kept: Record<string, number> = {};
      for (const table of tables)
        for (const row of sql.exec(`SELECT * FROM ${table}`).toArray())
          for (const v of Object.values(row)) kept[table] = (kept[table] ?? 0) + bytes(v);
      return { counted: storedTotals(sql).bytes_stored as number, kept };
    });
    // The workflow's own fixed rows (its row, the totals row, the migrations' record) are not work to count.
    const { workflow: _w, totals: _t, _migrations: _m, ...grown } = kept;
    const sum = Object.values(grown).reduce((a, b) => a + b, 0);
    expect(counted, `counted ${counted} bytes; the rows keep ${JSON.stringify(grown)}`).toBeGreaterThanOrEqual(sum);
    // And not wildly more: the quota is what is kept, with each row's overhead.
    expect(counted).toBeLessThan(2 * sum);
  });

  it("hold a task's bound of log entries with its count kept in memory: a refused write does not count, a completed task takes none", async () => {
    const { stub, taskId } = await newTask();
    const decide = (n: number) =>
      stub.logDecision(ACME, { task_id: taskId, category: "other", question: `Q${n}`, chosen: "A", reasoning: "R" });
    for (let n = 1; n < LIMITS.LOGS_PER_TASK; n++) value(await decide(n));
    // Inserted, then refused by the quota and rolled back: the count it added goes with it.
    await setTotals(stub, { events: LIMITS.WORKFLOW_EVENTS });
    expect(failure(await decide(0)).code).toBe("QUOTA_EXCEEDED");
    await setTotals(stub, { events: 1_000 });
    value(await decide(LIMITS.LOGS_PER_TASK));
    expect(failure(await decide(LIMITS.LOGS_PER_TASK + 1))).toEqual({
      code: "PAYLOAD_TOO_LARGE",
      message: `task_id: at most ${LIMITS.LOGS_PER_TASK} decisions per task`,
    });
    expect((await exec<{ n: number }>(stub, "SELECT count(*) AS n FROM log_entries WHERE kind = 'decisions'"))[0]?.n).toBe(
      LIMITS.LOGS_PER_TASK,
    );
    // Each kind has its own bound.
    value(await stub.logIssue(ACME, { task_id: taskId, type: "other", description: "D", resolution: "R" }));
    value(await stub.completeTask(ACME, { task_id: taskId, status: "success", outcome: { summary: "Done." } }));
    expect(failure(await stub.logIssue(ACME, { task_id: taskId, type: "other", description: "D", resolution: "R" })).code).toBe("CONFLICT");
  });

  it("refuse new work past the workflow's byte quota", async () => {
    const { stub, taskId } = await newTask();
    await setTotals(stub, { bytes_stored: LIMITS.WORKFLOW_BYTES });
    const refused = failure(await stub.logMilestone(ACME, { task_id: taskId, message: "one byte too many" }));
    expect(refused.code).toBe("QUOTA_EXCEEDED");
    expect(refused.message).toMatch(/bytes stored per workflow/);
  });

  it("refuse a new workflow once the account stores its quota of bytes", async () => {
    const account = `quota-${Date.now()}`;
    const index = env.ACCOUNT.get(env.ACCOUNT.idFromName(account)) as DurableObjectStub<AccountObject>;
    const { stub } = await newTask(account);
    await pushToAccount(stub);
    // The workflow's push says it stores the account's quota (the account keeps its usage from the pushes).
    const [summary] = await index.listWorkflows();
    if (!summary) throw new Error("the workflow's push did not reach its account");
    await index.recordWorkflow(account, { ...summary, bytes_stored: LIMITS.ACCOUNT_BYTES });
    const id = newWorkflowId();
    const refused = failure(await stubFor(id).startWorkflow(account, id, { name: "One more" }));
    expect(refused).toEqual({
      code: "QUOTA_EXCEEDED",
      message: `account: at most ${LIMITS.ACCOUNT_BYTES} bytes stored per account (this account stores ${LIMITS.ACCOUNT_BYTES})`,
    });
    expect(failure(await stubFor(id).readHead(account, false)).code).toBe("NOT_FOUND");
  });
});

describe("a write that rolls back", () => {
  // The object keeps the event log's head, the write's counts and whether feedback is waiting in
  // memory; a refused write appended an event and counted before its quota check failed.
  it("leaves nothing behind: the next write continues the chain without a gap and the totals count it once", async () => {
    const { id, stub, taskId } = await newTask();
    value(await stub.logDecision(ACME, { task_id: taskId, category: "other", question: "Q", chosen: "A", reasoning: "R" }));
    const events = Number((await totalsNow(stub)).events);
    await setTotals(stub, { events: LIMITS.WORKFLOW_EVENTS });
    const issue = { task_id: taskId, type: "other" as const, description: "D", resolution: "R", requires_human_review: true };
    expect(failure(await stub.logIssue(ACME, issue)).code).toBe("QUOTA_EXCEEDED");
    await setTotals(stub, { events });
    value(await stub.logIssue(ACME, issue));
    const exported = value(await readWhole(stub, ACME, true));
    const logged = (exported.events ?? []) as ChainedEvent[];
    expect(logged.map((e) => e.seq)).toEqual([1, 2, 3, 4]);
    expect(verifyChain(id, logged, exported.chain?.head ?? "")).toMatchObject({ ok: true, events: 4 });
    expect(exported.totals).toMatchObject({ tasks: 1, decisions: 1, issues: 1, reviews_needed: 1 });
    expect((await totalsNow(stub)).events).toBe(4);
  });

  it("that took reviewer feedback leaves it undelivered for the next call", async () => {
    const { id, stub, taskId } = await newTask();
    // The agent's write learns that nothing is waiting.
    expect(value(await stub.logMilestone(ACME, { task_id: taskId, message: "m" }))).not.toHaveProperty("reviewer_feedback");
    value(await stub.addFeedback(ACME, { target: "workflow", target_id: id, verdict: "comment", body: "Look at the tests.", ...ON_PAGE }));
    await runInDurableObject(stub, async (instance, state) => {
      const feedback = (instance as unknown as { feedback: FeedbackRecords }).feedback;
      const rollback = new Error("the commit failed");
      expect(() =>
        state.storage.transactionSync(() => {
          expect(feedback.takeDigest(() => id, Date.now())?.items).toHaveLength(1);
          throw rollback;
        }),
      ).toThrow(rollback);
      feedback.forgetUncommitted();
    });
    const next = value(await stub.logMilestone(ACME, { task_id: taskId, message: "m2" }));
    expect((next as WithFeedback<object>).reviewer_feedback?.items.map((item) => item.body)).toEqual(["Look at the tests."]);
  });
});

describe("the workflow's updated_at", () => {
  it("is the time of the agent's last write; a reviewer's feedback leaves it", async () => {
    const { id, stub, taskId } = await newTask();
    // Stored with the totals every write updates (workflow/totals), read through the workflow row.
    const updatedAt = async () => Date.parse(value(await stub.readHead(ACME, false)).workflow.updated_at);
    const lastEventAt = async () => (await exec<{ at: number }>(stub, "SELECT at FROM events ORDER BY seq DESC LIMIT 1"))[0]?.at;
    const writes: [string, () => Promise<unknown>][] = [
      ["log_decision", () => stub.logDecision(ACME, { task_id: taskId, category: "other", question: "Q", chosen: "A", reasoning: "R" })],
      ["log_issue", () => stub.logIssue(ACME, { task_id: taskId, type: "other", description: "D", resolution: "R" })],
      ["log_milestone", () => stub.logMilestone(ACME, { task_id: taskId, message: "m" })],
      ["start_task", () => stub.startTask(ACME, { workflow_id: id, name: "T2", goal: "G" })],
      ["complete_task", () => stub.completeTask(ACME, { task_id: taskId, status: "success", outcome: { summary: "S" } })],
    ];
    for (const [tool, write] of writes) {
      await exec(stub, "UPDATE workflow SET updated_at = 0");
      await setTotals(stub, { updated_at: 0 });
      await write();
      expect({ tool, updated_at: await updatedAt() }).toEqual({ tool, updated_at: await lastEventAt() });
    }
    const before = await updatedAt();
    // A feedback written later than the last write: had it moved updated_at, the value would differ.
    await clockPast(before ?? 0);
    value(await stub.addFeedback(ACME, { target: "workflow", target_id: id, verdict: "comment", body: "Noted.", ...ON_PAGE }));
    expect(await updatedAt()).toBe(before);
    expect(value(await stub.readHead(ACME, false)).workflow.updated_at).toBe(new Date(before ?? 0).toISOString());
  });
});

describe("running totals", () => {
  it("equal a recomputation over the whole workflow after every kind of write", async () => {
    const { id, stub, taskId } = await newTask();
    const child = value(await stub.startTask(ACME, { workflow_id: id, parent_task_id: taskId, name: "Child", goal: "G" }));
    value(
      await stub.logIssue(ACME, { task_id: child.task_id, type: "other", description: "D", resolution: "R", requires_human_review: true }),
    );
    value(await stub.logDecision(ACME, { task_id: child.task_id, category: "other", question: "Q", chosen: "A", reasoning: "R" }));
    const changes = {
      type: "checksum" as const,
      transitions: [
        { path: "a.ts", before: null, after: file("a") },
        { path: "b.ts", before: file("b1"), after: file("b2") },
      ],
    };
    value(
      await stub.completeTask(ACME, {
        task_id: child.task_id,
        status: "failed",
        outcome: { summary: "S", manual_review_needed: true },
        changes,
        metrics: { input_tokens: 10, output_tokens: 5, cost_usd: 0.25 },
      }),
    );
    value(
      await stub.completeTask(ACME, {
        task_id: taskId,
        status: "success",
        outcome: { summary: "S" },
        changes: { type: "checksum", transitions: [changes.transitions[0] as (typeof changes.transitions)[0]] },
        metrics: { input_tokens: 1, output_tokens: 2, cost_usd: 0.5 },
      }),
    );
    const view = value(await readWhole(stub, ACME));
    const [recomputed] = await exec<Record<string, number>>(
      stub,
      `SELECT (SELECT count(*) FROM tasks) AS tasks, (SELECT count(*) FROM tasks WHERE status = 'in_progress') AS open_tasks,
        (SELECT count(DISTINCT path) FROM ${FILE_CHANGES.text}) AS files_changed, (SELECT count(*) FROM log_entries WHERE kind = 'decisions') AS decisions,
        (SELECT count(*) FROM log_entries WHERE kind = 'issues') AS issues,
        (SELECT sum(requires_human_review) FROM log_entries WHERE kind = 'issues') + (SELECT count(*) FROM tasks WHERE json_extract(outcome, '$.manual_review_needed') = 1) AS reviews_needed,
        (SELECT sum(input_tokens) FROM tasks) AS input_tokens, (SELECT sum(output_tokens) FROM tasks) AS output_tokens,
        (SELECT sum(cost_usd) FROM tasks) AS cost_usd,
        (SELECT sum(duration_seconds) FROM tasks WHERE parent_id IS NULL) AS duration_seconds`,
    );
    expect(view.totals).toEqual(recomputed);
    expect(view.totals).toMatchObject({
      tasks: 2,
      open_tasks: 0,
      files_changed: 2,
      decisions: 1,
      issues: 1,
      reviews_needed: 2,
      cost_usd: 0.75,
    });
  });
});

type LiveMessage = { type: string; seq?: number; event?: { seq: number } };

async function follow(stub: DurableObjectStub<WorkflowObject>, token: string | null, client = "203.0.113.7", after = 0) {
  const headers: Record<string, string> = { Upgrade: "websocket", "Waymark-Client": client };
  if (token) headers["Waymark-Share-Token"] = token;
  const response = await stub.fetch(new Request(`https://workflow.internal/live?after=${after}`, { headers }));
  const socket = response.webSocket;
  if (!socket) return { status: response.status, socket: null, messages: [] as LiveMessage[], bytes: () => 0 };
  const messages: LiveMessage[] = [];
  let bytes = 0;
  socket.accept();
  socket.addEventListener("message", (m) => {
    const text = String(m.data);
    bytes += text.length;
    messages.push(JSON.parse(text) as LiveMessage);
  });
  return { status: response.status, socket, messages, bytes: () => bytes };
}

/** Waits until the follower has been sent a message that `matches` (the object answers in order). */
function received(live: { messages: LiveMessage[] }, what: string, matches: (message: LiveMessage) => boolean): Promise<true> {
  return eventually(what, async () => (live.messages.some(matches) ? true : null), 10_000, 5);
}

describe("live followers", () => {
  it("are refused without a verified share token, whatever the URL says", async () => {
    const { stub } = await newTask();
    expect((await follow(stub, null)).status).toBe(403);
    expect((await follow(stub, `sh_${"a".repeat(20)}_${"b".repeat(32)}`)).status).toBe(404);
    const token = value(await stub.manageShare(ACME, "rotate", null)).token as string;
    expect((await follow(stub, token)).status).toBe(101);
    value(await stub.manageShare(ACME, "revoke", null));
    expect((await follow(stub, token)).status).toBe(410);
  });

  it("catch up in pages pulled by the follower, and repeated {after: 0} requests send nothing again", async () => {
    const { stub, taskId } = await newTask();
    // ~5 KB per event: 150 of them take two pages of at most LIVE_PAGE_BYTES. Written in one
    // transaction through the object's own log, as 150 log_milestone calls would.
    const metadata = { blob: "x".repeat(LIMITS.METADATA_JSON_BYTES - 20) };
    await runInDurableObject(stub, async (instance) => {
      const log = (instance as unknown as { log: { append(now: number, type: string, taskId: string, data: object): void } }).log;
      for (let i = 0; i < 150; i++)
        log.append(Date.now(), "milestone.logged", taskId, { id: `ms_${i}`, task_id: taskId, message: `m${i}`, metadata });
    });
    const token = value(await stub.manageShare(ACME, "rotate", null)).token as string;
    const live = await follow(stub, token);
    await received(live, "the first page", (m) => m.type === "more");
    const firstPage = live.messages.at(-1);
    expect(firstPage?.type).toBe("more");
    expect(live.bytes()).toBeLessThan(LIMITS.LIVE_PAGE_BYTES + 10_000);
    live.socket?.send(JSON.stringify({ after: firstPage?.seq }));
    await received(live, "the last page", (m) => m.type === "caught_up");
    expect(live.messages.at(-1)).toMatchObject({ type: "caught_up" });
    const events = live.messages.filter((m) => m.type === "event").map((m) => m.event?.seq);
    expect(events).toEqual([...new Array(events.length).keys()].map((i) => i + 1));
    // The amplification attack: an 11-byte message asking for the whole log again, 30 times.
    const seen = live.messages.length;
    for (let i = 0; i < 30; i++) live.socket?.send('{"after":0}');
    // The object takes a socket's messages in order: its answer to a malformed one comes after
    // whatever the 30 requests made it send.
    live.socket?.send("not json");
    await received(live, "the answer to a malformed message", (m) => m.type === "error");
    expect(live.messages.slice(seen).map((m) => m.type)).toEqual(["error"]);
    // New events still arrive, once each.
    value(await stub.logMilestone(ACME, { task_id: taskId, message: "after" }));
    await received(live, "the new event", (m) => m.type === "event" && m.event?.seq === events.length + 1);
    const seqs = live.messages.filter((m) => m.type === "event").map((m) => m.event?.seq);
    expect(new Set(seqs).size).toBe(seqs.length);
    expect(seqs.at(-1)).toBe(events.length + 1);
  }, 30_000);

  it("are capped per client", async () => {
    const { stub } = await newTask();
    const token = value(await stub.manageShare(ACME, "rotate", null)).token as string;
    const opened = [];
    for (let i = 0; i < LIMITS.LIVE_SOCKETS_PER_CLIENT; i++) opened.push(await follow(stub, token, "198.51.100.9"));
    expect(opened.every((o) => o.status === 101)).toBe(true);
    expect((await follow(stub, token, "198.51.100.9")).status).toBe(429);
    expect((await follow(stub, token, "198.51.100.10")).status).toBe(101);
  });
});

describe("made-up ids", () => {
  it("probing a workflow id that was never created, through every kind of call, writes no schema and answers NOT_FOUND", async () => {
    const client = await connect(workerTarget());
    const id = newWorkflowId();
    const taskId = `tk_${id.slice(3)}_aaaaaaaa`;
    const probes: [string, Record<string, unknown>][] = [
      ["get_workflow", { workflow_id: id }],
      ["start_task", { workflow_id: id, name: "T", goal: "g" }],
      ["log_milestone", { task_id: taskId, message: "m" }],
      ["log_decision", { task_id: taskId, category: "other", question: "q", chosen: "c", reasoning: "r" }],
      ["complete_task", { task_id: taskId, status: "success", outcome: { summary: "s" } }],
      ["complete_workflow", { workflow_id: id, status: "success", summary: "s" }],
    ];
    for (const [tool, args] of probes) {
      const outcome = await callTool(client, tool, args);
      expect(outcome.isError, tool).toBe(true);
      expect(outcome.text, tool).toMatch(/^NOT_FOUND: /);
    }
    const stub = stubFor(id);
    expect(failure(await stub.readHead(ACME, false)).code).toBe("NOT_FOUND");
    // Nothing of Waymark's schema exists in the object: guessing ids creates no databases.
    const tables = await exec<{ name: string }>(
      stub,
      "SELECT name FROM sqlite_master WHERE name IN ('workflow', 'events', 'totals', 'schema_version')",
    );
    expect(tables).toEqual([]);
    // The same object still becomes a workflow when one is started there.
    value(await stub.startWorkflow(ACME, id, { name: "Created after the probes" }));
    expect(value(await stub.readHead(ACME, false)).workflow.name).toBe("Created after the probes");
  });
});
