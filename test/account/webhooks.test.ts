import { env, runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import type { AccountObject } from "../../src/account/account-object";
import { eventually } from "../support/eventually";
import { connect, ok } from "../support/mcp-client";
import { accountIndexed, ON_PAGE, ORIGIN, TOKENS, workerFetch, workerTarget } from "../support/worker";
import { workflowSummary } from "./fixtures";

/** REST errors are {code, message}; the assertions read them as one line. */
const errorText = (body: unknown) => `${(body as { code: string }).code}: ${(body as { message: string }).message}`;

const api = (path: string, init: RequestInit = {}, token: string = TOKENS.acme) =>
  workerFetch(`${ORIGIN}${path}`, {
    ...init,
    headers: { Authorization: `Bearer ${token}`, "Content-Type": "application/json", ...(init.headers ?? {}) },
  });
const register = (body: unknown, token?: string) => api("/api/webhooks", { method: "POST", body: JSON.stringify(body) }, token);

async function hmacHex(secret: string, message: string): Promise<string> {
  const key = await crypto.subtle.importKey("raw", new TextEncoder().encode(secret), { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
  const mac = await crypto.subtle.sign("HMAC", key, new TextEncoder().encode(message));
  return Array.from(new Uint8Array(mac), (b) => b.toString(16).padStart(2, "0")).join("");
}

type Recorded = { url: string; headers: Record<string, string>; body: string };

/** Replaces the account object's sender: records each request and answers with the next status of `statuses` (then 200). */
async function fakeReceiver(account: string, statuses: number[] = []): Promise<Recorded[]> {
  const recorded: Recorded[] = [];
  const stub = env.ACCOUNT.get(env.ACCOUNT.idFromName(account));
  await runInDurableObject(stub, (instance: AccountObject) => {
    instance.sender = async (url, init) => {
      recorded.push({ url, headers: Object.fromEntries(new Headers(init.headers).entries()), body: String(init.body) });
      return new Response("ok", { status: statuses.shift() ?? 200 });
    };
  });
  return recorded;
}

/** Makes every queued delivery due and runs the alarm, as the backoff would after its delay. */
async function retryNow(account: string): Promise<void> {
  const stub = env.ACCOUNT.get(env.ACCOUNT.idFromName(account));
  await runInDurableObject(stub, (_instance: AccountObject, state) => {
    state.storage.sql.exec("UPDATE webhook_deliveries SET next_attempt_at = 0");
  });
  await runDurableObjectAlarm(stub);
}

async function until(check: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 100 && !check(); i++) await new Promise((r) => setTimeout(r, 20));
  if (!check()) throw new Error(`timed out waiting for ${what}`);
}

/**
 * Waits until every event of `workflowId` reached the account and every delivery it queued has
 * been attempted: after it, no more requests come for these events.
 */
async function drained(workflowId: string, token?: string): Promise<void> {
  await accountIndexed(workflowId);
  await eventually(
    "every queued delivery attempted",
    async () => {
      const list = (await (await api("/api/webhooks", {}, token)).json()) as { webhooks: { pending: number }[] };
      return list.webhooks.every((hook) => hook.pending === 0) ? true : null;
    },
    10_000,
    10,
  );
}

type Status = { id: string; last_status: string | null; last_error: string | null; delivered: number; failed: number; pending: number };
async function statusOf(id: string, token?: string): Promise<Status | undefined> {
  const list = (await (await api("/api/webhooks", {}, token)).json()) as { webhooks: Status[] };
  return list.webhooks.find((w) => w.id === id);
}

describe("/api/webhooks", () => {
  it("registers (secret shown once), lists with status, deletes", async () => {
    const created = await register({ url: "https://hooks.example.com/a", events: ["task.failed"] });
    expect(created.status).toBe(201);
    const hook = (await created.json()) as { id: string; secret: string; events: string[]; url: string };
    expect(hook.secret).toMatch(/^whsec_[a-z2-7]{40}$/);
    expect(hook.events).toEqual(["task.failed"]);
    const listed = (await (await api("/api/webhooks")).json()) as { webhooks: Record<string, unknown>[] };
    const row = listed.webhooks.find((w) => w.id === hook.id);
    expect(row).toMatchObject({ url: "https://hooks.example.com/a", last_status: null, delivered: 0, failed: 0, pending: 0 });
    expect(row).not.toHaveProperty("secret");
    expect(((await (await api("/api/webhooks", {}, TOKENS.globex)).json()) as { webhooks: unknown[] }).webhooks).toEqual([]);
    expect((await api(`/api/webhooks/${hook.id}`, { method: "DELETE" }, TOKENS.globex)).status).toBe(404);
    expect((await api(`/api/webhooks/${hook.id}`, { method: "DELETE" })).status).toBe(200);
    expect((await api(`/api/webhooks/${hook.id}`, { method: "DELETE" })).status).toBe(404);
  });

  it.each([
    [{ url: "http://localhost:8080/x" }, "INPUT_VALIDATION_ERROR: url: private, loopback and link-local hosts are refused"],
    [{ url: "gopher://example.com" }, "INPUT_VALIDATION_ERROR: url: must use http or https"],
    [{ url: "https://example.com", events: ["task.done"] }, "INPUT_VALIDATION_ERROR: events: unknown event(s) task.done"],
    [{ url: "https://example.com", events: [] }, "INPUT_VALIDATION_ERROR: events: must be a non-empty array of"],
    [{ url: "https://example.com", secret: "mine" }, "INPUT_VALIDATION_ERROR: secret: unknown field"],
    [["https://example.com"], "INPUT_VALIDATION_ERROR: body: must be a JSON object"],
  ])("refuses %j with a clear error", async (body, message) => {
    const response = await register(body);
    expect(response.status).toBe(400);
    expect(errorText(await response.json())).toContain(message);
  });

  it("needs the bearer token (a session cookie is not enough) and bounds the number of webhooks", async () => {
    expect((await workerFetch(`${ORIGIN}/api/webhooks`)).status).toBe(401);
    const bounded = "bounded-webhooks";
    const ids: string[] = [];
    for (let i = 0; i < 10; i++) {
      const response = await register({ url: `https://hooks.example.com/${bounded}/${i}` }, TOKENS.globex);
      expect(response.status).toBe(201);
      ids.push(((await response.json()) as { id: string }).id);
    }
    const eleventh = await register({ url: "https://hooks.example.com/one-too-many" }, TOKENS.globex);
    expect(eleventh.status).toBe(403);
    expect(errorText(await eleventh.json())).toBe(
      "QUOTA_EXCEEDED: webhooks: at most 10 per account (this account has 10); delete one first",
    );
    for (const id of ids) await api(`/api/webhooks/${id}`, { method: "DELETE" }, TOKENS.globex);
  });
});

describe("deliveries", () => {
  it("signs and sends issue.needs_review, task.failed and workflow.completed to subscribed hooks only", async () => {
    const all = (await (
      await register({ url: "https://hooks.example.com/all", events: ["issue.needs_review", "task.failed", "workflow.completed"] })
    ).json()) as { id: string; secret: string };
    const onlyDone = (await (await register({ url: "https://hooks.example.com/done", events: ["workflow.completed"] })).json()) as {
      id: string;
    };
    const recorded = await fakeReceiver("acme");
    const client = await connect(workerTarget());
    const wf = await ok<{ workflow_id: string }>(client, "start_workflow", { name: "Hooked" });
    const task = await ok<{ task_id: string }>(client, "start_task", { workflow_id: wf.workflow_id, name: "Risky", goal: "g" });
    await ok(client, "log_issue", {
      task_id: task.task_id,
      type: "bug_encountered",
      description: "Needs eyes",
      resolution: "r",
      requires_human_review: true,
    });
    await ok(client, "log_issue", { task_id: task.task_id, type: "other", description: "Routine", resolution: "r" });
    await ok(client, "complete_task", { task_id: task.task_id, status: "failed", outcome: { summary: "Broke" } });
    await ok(client, "complete_workflow", { workflow_id: wf.workflow_id, status: "failed", summary: "Gave up" });
    await until(() => recorded.length >= 4, "4 deliveries");
    await drained(wf.workflow_id);
    expect(recorded).toHaveLength(4);

    const toAll = recorded.filter((r) => r.url.endsWith("/all"));
    expect(toAll.map((r) => r.headers["waymark-event"]).sort()).toEqual(["issue.needs_review", "task.failed", "workflow.completed"]);
    expect(recorded.filter((r) => r.url.endsWith("/done")).map((r) => r.headers["waymark-event"])).toEqual(["workflow.completed"]);
    for (const request of toAll) {
      const match = /^t=(\d+),v1=([0-9a-f]{64})$/.exec(request.headers["waymark-signature"] ?? "");
      expect(match).not.toBeNull();
      expect(Math.abs(Number(match?.[1]) - Date.now() / 1000)).toBeLessThan(60);
      expect(match?.[2]).toBe(await hmacHex(all.secret, `${match?.[1]}.${request.body}`));
      const body = JSON.parse(request.body) as { id: string; event: string; account: string; workflow: { id: string } };
      expect(body).toMatchObject({ event: request.headers["waymark-event"], account: "acme", workflow: { id: wf.workflow_id } });
      expect(request.headers["waymark-delivery"]).toBe(body.id);
      expect(request.headers["content-type"]).toBe("application/json");
    }
    const failed = JSON.parse(toAll.find((r) => r.headers["waymark-event"] === "task.failed")?.body ?? "{}");
    expect(failed.task).toMatchObject({ id: task.task_id, name: "Risky", status: "failed", summary: "Broke" });
    const review = JSON.parse(toAll.find((r) => r.headers["waymark-event"] === "issue.needs_review")?.body ?? "{}");
    expect(review.issue).toMatchObject({ task_id: task.task_id, description: "Needs eyes" });

    expect(await statusOf(all.id)).toMatchObject({ last_status: "ok", delivered: 3, failed: 0, pending: 0 });
    expect(await statusOf(onlyDone.id)).toMatchObject({ last_status: "ok", delivered: 1 });
    await api(`/api/webhooks/${all.id}`, { method: "DELETE" });
    await api(`/api/webhooks/${onlyDone.id}`, { method: "DELETE" });
  });

  it("sends task.review_requested and feedback.created with the owner URL, as JSON or as a Slack-compatible body", async () => {
    const json = (await (
      await register({ url: "https://hooks.example.com/review", events: ["task.review_requested", "feedback.created"] })
    ).json()) as { id: string; format: string };
    expect(json.format).toBe("json");
    const slack = (await (
      await register({ url: "https://hooks.example.com/slack", events: ["feedback.created"], format: "slack" })
    ).json()) as {
      id: string;
      format: string;
    };
    expect(slack.format).toBe("slack");
    const badFormat = await register({ url: "https://hooks.example.com/x", format: "teams" });
    expect(badFormat.status).toBe(400);
    expect(errorText(await badFormat.json())).toBe("INPUT_VALIDATION_ERROR: format: must be one of: json, slack");

    const recorded = await fakeReceiver("acme");
    const client = await connect(workerTarget());
    const wf = await ok<{ workflow_id: string }>(client, "start_workflow", { name: "Reviewed <hooks> & co", force_new: true });
    const task = await ok<{ task_id: string }>(client, "start_task", { workflow_id: wf.workflow_id, name: "Schema change", goal: "g" });
    await ok(client, "log_issue", {
      task_id: task.task_id,
      type: "other",
      description: "Check the index",
      resolution: "r",
      requires_human_review: true,
    });
    await ok(client, "complete_task", {
      task_id: task.task_id,
      status: "success",
      outcome: { summary: "Migrated", manual_review_needed: true, manual_review_reason: "Touches billing tables" },
    });
    const stub = env.WORKFLOW.get(env.WORKFLOW.idFromName(wf.workflow_id));
    const added = await stub.addFeedback("acme", {
      target: "task",
      target_id: task.task_id,
      verdict: "changes_requested",
      body: "Add a down migration",
      ...ON_PAGE,
    });
    expect(added.ok).toBe(true);
    await accountIndexed(wf.workflow_id);
    await until(() => recorded.length >= 4, "4 deliveries");
    await drained(wf.workflow_id);

    // The origin the agent's endpoint (and the dashboard) is reached at.
    const ownerUrl = `${ORIGIN}/w/${wf.workflow_id}`;
    const toJson = recorded.filter((r) => r.url.endsWith("/review")).map((r) => JSON.parse(r.body));
    expect(toJson.map((b) => b.event).sort()).toEqual(["feedback.created", "task.review_requested", "task.review_requested"]);
    for (const body of toJson) expect(body.owner_url).toBe(ownerUrl);
    const fromTask = toJson.find((b) => b.event === "task.review_requested" && b.task);
    expect(fromTask).toMatchObject({ task: { id: task.task_id }, review: { reason: "Touches billing tables" } });
    const fromIssue = toJson.find((b) => b.event === "task.review_requested" && b.issue);
    expect(fromIssue).toMatchObject({ issue: { task_id: task.task_id }, review: { reason: "Check the index" } });
    expect(toJson.find((b) => b.event === "feedback.created")?.feedback).toMatchObject({
      target: "task",
      target_id: task.task_id,
      verdict: "changes_requested",
      body: "Add a down migration",
      author: ON_PAGE.author,
      channel: "page",
    });

    const toSlack = recorded.filter((r) => r.url.endsWith("/slack"));
    expect(toSlack).toHaveLength(1);
    expect(JSON.parse(toSlack[0]?.body ?? "{}")).toEqual({
      text: `Feedback (changes requested) on <${ownerUrl}|Reviewed &lt;hooks&gt; &amp; co>: Add a down migration`,
    });
    await api(`/api/webhooks/${json.id}`, { method: "DELETE" });
    await api(`/api/webhooks/${slack.id}`, { method: "DELETE" });
  });

  it("retries with backoff after failures, then records success; gives up after 6 attempts", async () => {
    const account = "globex";
    const hook = (await (await register({ url: "https://hooks.example.com/flaky" }, TOKENS.globex)).json()) as { id: string };
    const recorded = await fakeReceiver(account, [500, 503, 200, 500, 500, 500, 500, 500, 500]);
    const client = await connect(workerTarget(TOKENS.globex));
    const wf = await ok<{ workflow_id: string }>(client, "start_workflow", { name: "Flaky receiver" });
    await ok(client, "complete_workflow", { workflow_id: wf.workflow_id, status: "success", summary: "ok" });
    await until(() => recorded.length >= 1, "first attempt");
    // The receiver has answered; the object records the attempt's outcome right after.
    await eventually(
      "the first attempt recorded",
      async () => ((await statusOf(hook.id, TOKENS.globex))?.last_status ? true : null),
      10_000,
      10,
    );
    expect(await statusOf(hook.id, TOKENS.globex)).toMatchObject({
      last_status: "retrying",
      last_error: "HTTP 500 (attempt 1 of 6)",
      pending: 1,
    });
    // The next attempt waits for the backoff: nothing is sent before it is due.
    await runDurableObjectAlarm(env.ACCOUNT.get(env.ACCOUNT.idFromName(account)));
    expect(recorded).toHaveLength(1);
    await retryNow(account);
    expect(await statusOf(hook.id, TOKENS.globex)).toMatchObject({ last_status: "retrying", last_error: "HTTP 503 (attempt 2 of 6)" });
    await retryNow(account);
    expect(recorded).toHaveLength(3);
    expect(new Set(recorded.map((r) => r.headers["waymark-delivery"])).size).toBe(1);
    expect(await statusOf(hook.id, TOKENS.globex)).toMatchObject({ last_status: "ok", last_error: null, delivered: 1, pending: 0 });

    // A receiver that keeps failing: six attempts, then the delivery is given up and counted.
    const wf2 = await ok<{ workflow_id: string }>(client, "start_workflow", { name: "Down receiver" });
    await ok(client, "complete_workflow", { workflow_id: wf2.workflow_id, status: "success", summary: "ok" });
    await until(() => recorded.length >= 4, "first attempt of the second delivery");
    for (let i = 0; i < 8; i++) await retryNow(account);
    expect(recorded).toHaveLength(9);
    expect(await statusOf(hook.id, TOKENS.globex)).toMatchObject({
      last_status: "failed",
      last_error: "HTTP 500 (gave up after 6 attempts)",
      delivered: 1,
      failed: 1,
      pending: 0,
    });
  });

  it("does not deliver twice when a workflow's push is replayed", async () => {
    const stub = env.ACCOUNT.get(env.ACCOUNT.idFromName("replay"));
    // An account of its own, with a webhook as one registered before webhooks recorded their credential.
    await runInDurableObject(stub, (_: AccountObject, state) => {
      state.storage.sql.exec(
        "INSERT INTO webhooks (id, url, secret, events, format, created_at) VALUES ('wh_replay', 'https://hooks.example.com/replay', 'whsec_x', ?, 'json', ?)",
        JSON.stringify(["workflow.completed"]),
        Date.now(),
      );
    });
    const summary = workflowSummary("wf_replayaaaaaaaaaaaaaa", "Replay", "success");
    const notifications = [
      {
        key: "wf_replayaaaaaaaaaaaaaa:2",
        event: "workflow.completed" as const,
        workflow: { id: summary.id, name: "Replay", status: "success" },
      },
    ];
    await runInDurableObject(stub, (instance: AccountObject) => {
      instance.sender = async () => new Response(null, { status: 500 }); // the delivery stays queued for a retry
    });
    await stub.recordWorkflow("replay", summary, { notifications });
    await stub.recordWorkflow("replay", summary, { notifications });
    const hooks = await stub.listWebhooks();
    expect(hooks[0]?.pending).toBe(1);
  });
});
