import { env, runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import type { AccountObject } from "../../src/account/account-object";
import { LIMITS } from "../../src/limits";
import { OWNER_ACCOUNT_HEADER, OWNER_SESSION_HEADER, type WorkflowObject } from "../../src/workflow/workflow-object";
import { eventually } from "../support/eventually";
import { signIn, TOKENS, workerFetch } from "../support/worker";
import { toolCaller } from "./fixture";

/**
 * The owner view through the Worker: session-only access that does not depend on the share
 * link, the owner's live socket contract (the object checks the account and the session, never
 * the URL), the feedback form, and the feedback digest in the agent's next tool result.
 */
const ORIGIN = "http://localhost";
const acme = toolCaller(workerFetch, `${ORIGIN}/mcp`, TOKENS.acme);

const sessionId = (cookie: string) => /^waymark_session=[a-z0-9_-]+\.([a-z2-7]{26})\./.exec(cookie)?.[1] ?? "";

const form = (cookie: string, fields: Record<string, string>) => ({
  method: "POST",
  headers: { "Content-Type": "application/x-www-form-urlencoded", Cookie: cookie, Origin: ORIGIN },
  body: new URLSearchParams(fields).toString(),
  redirect: "manual" as const,
});

const stubOf = (id: string): DurableObjectStub<WorkflowObject> => env.WORKFLOW.get(env.WORKFLOW.idFromName(id));

/** A workflow and its first task, recorded by `agent` (the owner's own bootstrap token unless another is given). */
async function newWorkflow(name: string, agent = acme) {
  const wf = await agent("start_workflow", { name, force_new: true });
  const id = String(wf.workflow_id);
  const task = await agent("start_task", { workflow_id: id, name: "First", goal: "g" });
  return { id, taskId: String(task.task_id), shareUrl: String(wf.share_url) };
}

/** The agent with a write token of its own, made by the owner (the Tokens page's API): not the owner's credential. */
async function agentOfItsOwn() {
  const made = await workerFetch(`${ORIGIN}/api/tokens`, {
    method: "POST",
    headers: { Authorization: `Bearer ${TOKENS.acme}`, "Content-Type": "application/json" },
    body: JSON.stringify({ name: "the agent", scopes: ["read", "write"] }),
  });
  expect(made.status).toBe(201);
  const { id, token } = (await made.json()) as { id: string; token: string };
  return { id, token, call: toolCaller(workerFetch, `${ORIGIN}/mcp`, token) };
}

async function follow(path: string, cookie: string | null) {
  const headers: Record<string, string> = { Upgrade: "websocket" };
  if (cookie) headers.Cookie = cookie;
  const response = await workerFetch(`${ORIGIN}${path}`, { headers });
  const socket = response.webSocket;
  const messages: string[] = [];
  let closed: number | null = null;
  if (socket) {
    socket.accept();
    socket.addEventListener("message", (m) => messages.push(String(m.data)));
    socket.addEventListener("close", (e) => {
      closed = e.code;
    });
  }
  return { status: response.status, socket, messages, closed: () => closed };
}

/** The close code `socket` gets, once it gets one. */
const closeOf = (socket: { closed: () => number | null }, what: string) => eventually(what, async () => socket.closed(), 10_000, 5);

describe("the owner URL", () => {
  it("needs a session, opens only the account's own workflows, and works whatever the share link's state", async () => {
    const { id, shareUrl } = await newWorkflow("Owner page");
    const anonymous = await workerFetch(`${ORIGIN}/w/${id}`, { redirect: "manual" });
    expect(anonymous.status).toBe(303);
    expect(anonymous.headers.get("Location")).toBe("/login");
    const cookie = await signIn();
    const page = await workerFetch(`${ORIGIN}/w/${id}`, { headers: { Cookie: cookie } });
    expect(page.status).toBe(200);
    expect(await page.text()).toContain("Owner page");

    // Revoking asks first; the confirming form revokes.
    const asked = await workerFetch(`${ORIGIN}/w/${id}/share`, form(cookie, { action: "revoke" }));
    expect([asked.status, (await asked.text()).includes(`Revoke the share link of workflow ${id}?`)]).toEqual([200, true]);
    expect((await workerFetch(shareUrl)).status).toBe(200);
    const revoked = await workerFetch(`${ORIGIN}/w/${id}/share`, form(cookie, { action: "revoke", confirmed: "yes" }));
    expect(revoked.status).toBe(303);
    expect((await workerFetch(shareUrl)).status).toBe(410);
    const afterRevoke = await workerFetch(`${ORIGIN}/w/${id}`, { headers: { Cookie: cookie } });
    expect(afterRevoke.status).toBe(200);
    expect(await afterRevoke.text()).toContain("Nobody can open this workflow by link now.");
    for (const part of ["blocks", "export.json", "export.md"]) {
      expect((await workerFetch(`${ORIGIN}/w/${id}/${part}`, { headers: { Cookie: cookie } })).status).toBe(200);
      // Without a session these answer 404, never the sign-in page the live client would swap in.
      expect((await workerFetch(`${ORIGIN}/w/${id}/${part}`, { redirect: "manual" })).status).toBe(404);
    }

    const other = await signIn(TOKENS.globex);
    expect((await workerFetch(`${ORIGIN}/w/${id}`, { headers: { Cookie: other } })).status).toBe(404);
    expect((await workerFetch(`${ORIGIN}/w/${id}/blocks`, { headers: { Cookie: other } })).status).toBe(404);
    expect(
      (await workerFetch(`${ORIGIN}/w/${id}/feedback`, form(other, { target: `workflow:${id}`, verdict: "comment", body: "x" }))).status,
    ).toBe(404);
  });

  it("the live socket takes the session, not a share token; revoking the link closes shared pages, not the owner's; sign-out does", async () => {
    const { id, taskId, shareUrl } = await newWorkflow("Owner socket");
    const token = new URL(shareUrl).pathname.split("/")[2] ?? "";
    const cookie = await signIn();
    expect((await follow(`/w/${id}/ws`, null)).status).toBe(404);
    expect((await follow(`/w/${id}/ws`, await signIn(TOKENS.globex))).status).toBe(403);
    const owner = await follow(`/w/${id}/ws?after=0`, cookie);
    const shared = await follow(`/s/${token}/ws?after=0`, null);
    expect([owner.status, shared.status]).toEqual([101, 101]);

    await workerFetch(`${ORIGIN}/w/${id}/share`, form(cookie, { action: "revoke", confirmed: "yes" }));
    expect(await closeOf(shared, "the shared page closed")).toBe(4410);
    await acme("log_milestone", { task_id: taskId, message: "still followed" });
    await eventually(
      "the owner's page sent the new event",
      async () => (owner.messages.some((m) => m.includes("still followed")) ? true : null),
      10_000,
      5,
    );
    expect(owner.closed()).toBeNull();

    // Signing out closes the live pages the session opened: a stale tab gets nothing more.
    expect((await workerFetch(`${ORIGIN}/logout`, form(cookie, {}))).status).toBe(303);
    expect(await closeOf(owner, "the owner's page closed at sign-out")).toBe(4401);
  });

  it("a session ends at its expiry: the account's alarm closes its live pages, and its cookie is refused", async () => {
    const { id } = await newWorkflow("Session expiry");
    const cookie = await signIn();
    const owner = await follow(`/w/${id}/ws?after=0`, cookie);
    expect(owner.status).toBe(101);
    const account = env.ACCOUNT.get(env.ACCOUNT.idFromName("acme"));
    // The session's 12 hours are over (its expiry, moved into the past), and the object's alarm fires.
    await runInDurableObject(account, (_: AccountObject, state) => {
      state.storage.sql.exec("UPDATE dashboard_sessions SET expires_at = ? WHERE id = ?", Date.now() - 1, sessionId(cookie));
    });
    expect(await runDurableObjectAlarm(account)).toBe(true);
    expect(await closeOf(owner, "the owner's page closed at the session's expiry")).toBe(4401);
    expect((await workerFetch(`${ORIGIN}/w/${id}`, { headers: { Cookie: cookie }, redirect: "manual" })).status).toBe(303);
  });

  it("the object checks the owner's account and session itself: a bare or forged header is refused", async () => {
    const { id } = await newWorkflow("Forged owner");
    const stub = stubOf(id);
    const live = (headers: Record<string, string>) =>
      stub.fetch(new Request(`https://workflow.internal/live?after=0`, { headers: { Upgrade: "websocket", ...headers } }));
    const cookie = await signIn();
    const open = sessionId(cookie);
    expect(open).not.toBe("");
    expect((await live({ [OWNER_ACCOUNT_HEADER]: "acme" })).status).toBe(403);
    expect((await live({ [OWNER_ACCOUNT_HEADER]: "acme", [OWNER_SESSION_HEADER]: "a".repeat(26) })).status).toBe(403);
    expect((await live({ [OWNER_ACCOUNT_HEADER]: "globex", [OWNER_SESSION_HEADER]: open })).status).toBe(403);
    // A share token header does not help a refused owner header.
    const shared = await stub.manageShare("acme", "rotate", null);
    const token = shared.ok ? String(shared.value.token) : "";
    expect((await live({ [OWNER_ACCOUNT_HEADER]: "globex", [OWNER_SESSION_HEADER]: open, "Waymark-Share-Token": token })).status).toBe(403);
    expect((await live({ [OWNER_ACCOUNT_HEADER]: "acme", [OWNER_SESSION_HEADER]: open })).status).toBe(101);
    // Signed out: the same headers are refused.
    await workerFetch(`${ORIGIN}/logout`, form(cookie, {}));
    expect((await live({ [OWNER_ACCOUNT_HEADER]: "acme", [OWNER_SESSION_HEADER]: open })).status).toBe(403);
  });
});

describe("feedback", () => {
  it("the form checks its fields and its target", async () => {
    const { id } = await newWorkflow("Feedback form");
    const other = await newWorkflow("Other workflow");
    const cookie = await signIn();
    const post = (fields: Record<string, string>) => workerFetch(`${ORIGIN}/w/${id}/feedback`, form(cookie, fields));
    const cases: [Record<string, string>, number, string][] = [
      [{ target: `workflow:${id}`, verdict: "comment", body: "  " }, 400, "body: must not be empty for a comment"],
      [{ target: `workflow:${id}`, verdict: "maybe", body: "x" }, 400, 'verdict: must be "comment", "approved" or "changes_requested"'],
      [{ target: `file:${id}`, verdict: "comment", body: "x" }, 400, "target: must name the workflow, a task, a decision or an issue"],
      [
        { target: `workflow:${id}`, verdict: "comment", body: "x".repeat(LIMITS.FEEDBACK_TEXT + 1) },
        400,
        "body: must be at most 2000 characters",
      ],
      [{ target: `task:${other.taskId}`, verdict: "comment", body: "x" }, 404, `target_id: no task ${other.taskId} in workflow ${id}`],
      [{ target: `workflow:${other.id}`, verdict: "comment", body: "x" }, 404, `target_id: no workflow ${other.id} in workflow ${id}`],
    ];
    for (const [fields, status, message] of cases) {
      const response = await post(fields);
      expect([response.status, await response.text()]).toEqual([status, message]);
    }
    const crossSite = await workerFetch(`${ORIGIN}/w/${id}/feedback`, {
      ...form(cookie, { target: `workflow:${id}`, verdict: "comment", body: "x" }),
      headers: { "Content-Type": "application/x-www-form-urlencoded", Cookie: cookie, Origin: "https://evil.example" },
    });
    expect(crossSite.status).toBe(403);
    const head = await stubOf(id).readHead("acme", true);
    expect(head.ok && head.value.feedback).toEqual([]);
  });

  it("is shown, escaped, on the owner view and on the shared page", async () => {
    const { id, shareUrl } = await newWorkflow("Shown feedback");
    const cookie = await signIn();
    const body = `<img src=x onerror="alert(1)"> looks <b>wrong</b>`;
    const posted = await workerFetch(`${ORIGIN}/w/${id}/feedback`, form(cookie, { target: `workflow:${id}`, verdict: "approved", body }));
    expect(posted.status).toBe(303);
    for (const page of [
      await (await workerFetch(`${ORIGIN}/w/${id}`, { headers: { Cookie: cookie } })).text(),
      await (await workerFetch(shareUrl)).text(),
    ]) {
      expect(page).toContain("&lt;img src=x onerror=&quot;alert(1)&quot;&gt; looks &lt;b&gt;wrong&lt;/b&gt;");
      expect(page).not.toContain("<img src=x");
      expect(page).toMatch(
        /<span class="badge v-approved"><span class="shape" aria-hidden="true">✓<\/span> approved<\/span> on <a href="#[^"]+">the workflow<\/a>/,
      );
    }
    const markdown = await (await workerFetch(`${ORIGIN}/w/${id}/export.md`, { headers: { Cookie: cookie } })).text();
    expect(markdown).toContain("### Reviewer feedback");
    expect(markdown).toMatch(/- \*\*approved\*\* on the workflow \(signed in with a bootstrap token, on the page\): .*looks/);
    expect(markdown).not.toContain("<img");
  });

  it("reaches the agent in its next tool result, bounded, once; the rest follows; get_workflow shows all", async () => {
    const agent = await agentOfItsOwn();
    const { id, taskId } = await newWorkflow("Digest", agent.call);
    const cookie = await signIn();
    for (let i = 0; i < 5; i++) {
      const verdict = i === 0 ? "changes_requested" : "comment";
      const response = await workerFetch(
        `${ORIGIN}/w/${id}/feedback`,
        form(cookie, { target: i === 0 ? `task:${taskId}` : `workflow:${id}`, verdict, body: `${i} ${"long words ".repeat(180)}` }),
      );
      expect(response.status).toBe(303);
    }
    const call = (message: string) =>
      workerFetch(`${ORIGIN}/mcp`, {
        method: "POST",
        headers: {
          "Content-Type": "application/json",
          Accept: "application/json, text/event-stream",
          "MCP-Protocol-Version": "2025-06-18",
          Authorization: `Bearer ${TOKENS.acme}`,
        },
        body: JSON.stringify({
          jsonrpc: "2.0",
          id: 1,
          method: "tools/call",
          params: { name: "log_milestone", arguments: { task_id: taskId, message } },
        }),
      }).then(async (r) => {
        const body = await r.text();
        const json = body.startsWith("event:") ? (body.split("\n").find((l) => l.startsWith("data: ")) ?? "").slice(6) : body;
        return (JSON.parse(json) as { result: { structuredContent: Record<string, unknown>; content: { text: string }[] } }).result;
      });
    type Digest = { items: { id: string; on: string; verdict: string; body: string }[]; more: number; full: string };
    const delivered: string[] = [];
    // Concurrent calls never deliver one item twice.
    const results = await Promise.all([call("a"), call("b")]);
    for (let round = 0; round < 6; round++) {
      for (const result of round === 0 ? results : [await call(`m${round}`)]) {
        const digest = result.structuredContent.reviewer_feedback as Digest | undefined;
        if (!digest) continue;
        expect(JSON.stringify(digest).length).toBeLessThan(LIMITS.FEEDBACK_RESULT_BYTES + 200);
        const text = result.content.at(-1)?.text ?? "";
        expect(Buffer.byteLength(text)).toBeLessThan(700);
        expect(text).toContain(`get_workflow {"workflow_id": "${id}"}`);
        delivered.push(...digest.items.map((i) => i.id));
      }
    }
    expect(delivered).toHaveLength(5);
    expect(new Set(delivered).size).toBe(5);
    const first = results
      .map((r) => r.structuredContent.reviewer_feedback as Digest | undefined)
      .find((d) => d?.items[0]?.verdict === "changes_requested");
    expect(first?.items[0]?.on).toBe(taskId);
    expect(first?.items[0]?.body.length).toBeLessThanOrEqual(160);

    const resumed = await acme("get_workflow", { workflow_id: id });
    const all = resumed.feedback as { body: string; delivered_at: string | null }[];
    expect(all).toHaveLength(5);
    expect(all.every((f) => f.body.length > 1000 && f.delivered_at !== null)).toBe(true);
  });
});

describe("the sharing setting", () => {
  it("defaults to a link for new workflows; when off, start_workflow makes none and the owner can make one later", async () => {
    const cookie = await signIn(TOKENS.globex);
    const globex = toolCaller(workerFetch, `${ORIGIN}/mcp`, TOKENS.globex);
    expect(String((await globex("start_workflow", { name: "Shared by default", force_new: true })).share_url)).toMatch(/\/s\/sh_/);
    expect((await workerFetch(`${ORIGIN}/dashboard/settings`, form(cookie, {}))).status).toBe(303);
    const dashboard = await (await workerFetch(`${ORIGIN}/dashboard`, { headers: { Cookie: cookie } })).text();
    expect(dashboard).toMatch(/name="share_new_workflows" value="on">/);
    const unshared = await globex("start_workflow", { name: "Private", force_new: true });
    expect(unshared.share_url).toBeUndefined();
    const id = String(unshared.workflow_id);
    const page = await (await workerFetch(`${ORIGIN}/w/${id}`, { headers: { Cookie: cookie } })).text();
    expect(page).toContain("This workflow has no share link: only you can see it.");
    expect((await workerFetch(`${ORIGIN}/w/${id}/share`, form(cookie, { action: "rotate", expires_in_seconds: "" }))).status).toBe(303);
    const shared = await (await workerFetch(`${ORIGIN}/w/${id}`, { headers: { Cookie: cookie } })).text();
    const link = /id="share-url" href="([^"]+)"/.exec(shared)?.[1] ?? "";
    expect((await workerFetch(link)).status).toBe(200);
    expect((await workerFetch(`${ORIGIN}/dashboard/settings`, form(cookie, { share_new_workflows: "on" }))).status).toBe(303);
    expect(String((await globex("start_workflow", { name: "Shared again", force_new: true })).share_url)).toMatch(/\/s\/sh_/);
  });
});

describe("only people review: the agent signed in to the page with its own token", () => {
  it("a verdict from a session signed in with the credential that recorded the task is a comment saying why; the owner's counts", async () => {
    const agent = await agentOfItsOwn();
    const { id, taskId } = await newWorkflow("Self-approval", agent.call);
    await agent.call("complete_task", {
      task_id: taskId,
      status: "success",
      outcome: { summary: "Refunds", manual_review_needed: true, manual_review_reason: "Moves money" },
    });
    const counts = async () => {
      const head = await stubOf(id).readHead("acme", true);
      if (!head.ok) throw new Error(head.message);
      return { needed: head.value.totals.reviews_needed, open: head.value.review.review.open, feedback: head.value.feedback ?? [] };
    };
    expect((await counts()).needed).toBe(1);

    // The attack: the agent signs in to the dashboard with its own token, as a curl POST to /login
    // would, and approves its own task with the page's form (the script's JSON answer, then the form's).
    const agentSession = await signIn(agent.token);
    expect(agentSession).not.toBe("");
    const page = await (await workerFetch(`${ORIGIN}/w/${id}`, { headers: { Cookie: agentSession } })).text();
    expect(page).toContain("You signed in with the token that recorded this workflow's tasks.");
    const asJson = await workerFetch(`${ORIGIN}/w/${id}/feedback`, {
      ...form(agentSession, { target: `task:${taskId}`, verdict: "approved", body: "LGTM" }),
      headers: { ...form(agentSession, {}).headers, Accept: "application/json" },
    });
    expect(asJson.status).toBe(200);
    expect(await asJson.json()).toMatchObject({ verdict: "comment", requested_verdict: "approved", channel: "page" });
    const posted = await workerFetch(
      `${ORIGIN}/w/${id}/feedback`,
      form(agentSession, { target: `task:${taskId}`, verdict: "changes_requested", body: "Reopen" }),
    );
    expect(posted.status).toBe(303);
    const attacked = await counts();
    expect([attacked.needed, attacked.open]).toEqual([1, 1]);
    expect(attacked.feedback.map((f) => [f.verdict, f.requested_verdict, f.author])).toEqual([
      ["comment", "approved", { kind: "managed_token", credential: agent.id, via: "session" }],
      ["comment", "changes_requested", { kind: "managed_token", credential: agent.id, via: "session" }],
    ]);
    const shown = await (await workerFetch(`${ORIGIN}/w/${id}`, { headers: { Cookie: agentSession } })).text();
    expect(shown).toContain(
      `signed in with token ${agent.id}, on the page; asked for an approval, recorded as a comment (signed in with the credential that recorded this task, which the agent holds too: the server cannot tell a person from the agent)`,
    );

    // The owner, signed in with a credential of their own, is told nothing of the kind, and approves: it counts.
    const owner = await signIn();
    const ownerPage = await (await workerFetch(`${ORIGIN}/w/${id}`, { headers: { Cookie: owner } })).text();
    expect(ownerPage).not.toContain('id="shared-credential"');
    expect((await workerFetch(`${ORIGIN}/w/${id}/feedback`, form(owner, { target: `task:${taskId}`, verdict: "approved" }))).status).toBe(
      303,
    );
    const reviewed = await counts();
    expect([reviewed.needed, reviewed.open]).toEqual([0, 0]);
    expect(reviewed.feedback.at(-1)).toMatchObject({ verdict: "approved", body: "", author: { kind: "bootstrap_token", via: "session" } });
    expect(reviewed.feedback.at(-1)?.requested_verdict).toBeUndefined();
  });
});
