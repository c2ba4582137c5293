import { beforeAll, describe, expect, it } from "vitest";
import { callTool, connect } from "../support/mcp-client";
import { ORIGIN, signIn, TOKENS, workerFetch, workerTarget } from "../support/worker";

/**
 * The workflow reads (src/routes/workflow-reads.ts) through the real Worker, at every mount and for
 * every kind of reader: a share link's holder (/s/:token), the signed-in owner (/w/:id) and a
 * token (/api/workflows/:id), with paths as browsers and scripts send them, percent-encoded
 * included (the app routes on the decoded path; every form gets the same checks). Refusals: a
 * made-up, revoked or rotated link, another account's session or token, a credential without the
 * read scope, a read a mount does not offer.
 */

let workflowId = "";
let taskId = "";
let shareToken = "";
const managed = {} as Record<"read" | "write" | "admin", string>;

const get = (path: string, headers: Record<string, string> = {}, method = "GET") =>
  workerFetch(`${ORIGIN}${path}`, { method, headers, redirect: "manual" });
const bearer = (token: string) => ({ Authorization: `Bearer ${token}` });

/** Every letter of `text` as %XX: the same path to the app, another string to anything that compares raw URLs. */
const encodedLetters = (text: string) => text.replace(/[a-z]/g, (letter) => `%${letter.charCodeAt(0).toString(16)}`);

async function newToken(scopes: string[]): Promise<string> {
  const response = await workerFetch(`${ORIGIN}/api/tokens`, {
    method: "POST",
    headers: { ...bearer(TOKENS.acme), "Content-Type": "application/json" },
    body: JSON.stringify({ name: `reads ${scopes.join(" ")}`, scopes }),
  });
  expect(response.status).toBe(201);
  return ((await response.json()) as { token: string }).token;
}

async function shareAction(id: string, action: "rotate" | "revoke"): Promise<string | null> {
  const response = await workerFetch(`${ORIGIN}/api/workflows/${id}/share`, {
    method: "POST",
    headers: { ...bearer(TOKENS.acme), "Content-Type": "application/json" },
    body: JSON.stringify({ action }),
  });
  expect(response.status).toBe(200);
  const url = ((await response.json()) as { share_url: string | null }).share_url;
  return url === null ? null : (new URL(url).pathname.split("/")[2] ?? "");
}

async function recordWorkflow(name: string): Promise<{ id: string; task: string; token: string }> {
  const client = await connect(workerTarget(TOKENS.acme));
  const wf = await callTool(client, "start_workflow", { name, force_new: true });
  const id = String(wf.structured.workflow_id);
  const task = await callTool(client, "start_task", { workflow_id: id, name: "Read me", goal: "g" });
  await callTool(client, "complete_task", { task_id: task.structured.task_id, status: "success", outcome: { summary: "Done" } });
  await client.close();
  return { id, task: String(task.structured.task_id), token: new URL(String(wf.structured.share_url)).pathname.split("/")[2] ?? "" };
}

beforeAll(async () => {
  ({ id: workflowId, task: taskId, token: shareToken } = await recordWorkflow("Read everywhere"));
  for (const scope of ["read", "write", "admin"] as const) managed[scope] = await newToken([scope]);
});

/** What each read answers with when it is served: its status, content type and something of its body. */
const SERVED: Record<string, [string, RegExp]> = {
  "": ["text/html; charset=UTF-8", /Read everywhere/],
  "/blocks": ["text/html; charset=UTF-8", /Read me/],
  "/files/:task": ["text/html; charset=UTF-8", /Read me/],
  "/export.json": ["application/json; charset=utf-8", /"name": "Read everywhere"/],
  "/export.md": ["text/markdown; charset=utf-8", /Read everywhere/],
  "/export.agent-trace.json": ["application/json; charset=utf-8", /^\[/],
};
const path = (suffix: string) => suffix.replace(":task", taskId);

async function expectServed(url: string, suffix: string, headers: Record<string, string>) {
  const response = await get(url, headers);
  const [type, body] = SERVED[suffix] ?? ["", /^$/];
  expect(response.status, url).toBe(200);
  expect(response.headers.get("Content-Type"), url).toBe(type);
  expect(response.headers.get("Cache-Control"), url).toBe("no-store");
  expect(await response.text(), url).toMatch(body);
}

async function live(url: string, headers: Record<string, string>): Promise<number> {
  const response = await get(url, { ...headers, Upgrade: "websocket" });
  response.webSocket?.accept();
  response.webSocket?.close();
  return response.status;
}

describe("every mount serves the workflow reads it offers, to its kind of reader", () => {
  it("a share link's holder: the page, blocks, files, the three exports and the live feed, plain and percent-encoded", async () => {
    for (const base of [`/s/${shareToken}`, `/%73/${encodedLetters(shareToken)}`]) {
      for (const suffix of Object.keys(SERVED)) {
        await expectServed(`${base}${path(suffix)}`, suffix, {});
        await expectServed(`${base}${encodedLetters(path(suffix))}`, suffix, {});
      }
      expect(await live(`${base}/ws?after=0`, {})).toBe(101);
      expect(await live(`${base}/%77s`, {})).toBe(101);
    }
    // The page carries its CSP nonce; the exports are never rendered as a document.
    const page = await get(`/s/${shareToken}`);
    const nonce = /script-src 'nonce-([^']+)'/.exec(page.headers.get("Content-Security-Policy") ?? "")?.[1] ?? "";
    expect(nonce).not.toBe("");
    expect(await page.text()).toContain(`nonce="${nonce}"`);
    expect((await get(`/s/${shareToken}/export.json`)).headers.get("Content-Security-Policy")).toContain("default-src 'none'");
  });

  it("the signed-in owner: the same reads, the page as the owner view, with a session of any credential holding read", async () => {
    for (const credential of [TOKENS.acme, managed.read, managed.write]) {
      const cookie = { Cookie: await signIn(credential) };
      for (const base of [`/w/${workflowId}`, `/%77/${encodedLetters(workflowId)}`]) {
        for (const suffix of Object.keys(SERVED)) await expectServed(`${base}${path(suffix)}`, suffix, cookie);
        expect(await live(`${base}/ws?after=0`, cookie)).toBe(101);
      }
      expect(await (await get(`/w/${workflowId}`, cookie)).text()).toContain('id="share"');
    }
  });

  it("a token holding read (read or write, or the owner's session): the three exports; a read-only one writes nothing", async () => {
    // Each is charged to the account's export budget (20 a minute): a few of each kind.
    for (const suffix of ["/export.json", "/export.md", "/export.agent-trace.json"]) {
      await expectServed(`/api/workflows/${workflowId}${suffix}`, suffix, bearer(managed.read));
      await expectServed(`/api/workflows/${encodedLetters(workflowId)}${encodedLetters(suffix)}`, suffix, bearer(managed.read));
    }
    for (const headers of [bearer(managed.write), bearer(TOKENS.acme), { Cookie: await signIn(managed.read) }]) {
      await expectServed(`/api/workflows/${workflowId}/export.md`, "/export.md", headers);
    }
    // What a read-only token may read, it may not change: the link, feedback, the record itself.
    const shareChange = await workerFetch(`${ORIGIN}/api/workflows/${workflowId}/share`, {
      method: "POST",
      headers: { ...bearer(managed.read), "Content-Type": "application/json" },
      body: JSON.stringify({ action: "revoke" }),
    });
    expect(shareChange.status).toBe(403);
    const readOnly = await signIn(managed.read);
    const feedback = await workerFetch(`${ORIGIN}/w/${workflowId}/feedback`, {
      method: "POST",
      headers: { Cookie: readOnly, "Content-Type": "application/x-www-form-urlencoded", Origin: ORIGIN },
      body: new URLSearchParams({ target: `workflow:${workflowId}`, verdict: "comment", body: "read-only" }).toString(),
      redirect: "manual",
    });
    expect(feedback.status).toBe(403);
  });

  it("the token mount offers the exports only: the page, blocks, files and live feed are the browser's", async () => {
    for (const suffix of ["", "/blocks", `/files/${taskId}`]) {
      expect((await get(`/api/workflows/${workflowId}${suffix}`, bearer(TOKENS.acme))).status).toBe(404);
    }
    expect(await live(`/api/workflows/${workflowId}/ws`, bearer(TOKENS.acme))).toBe(404);
  });
});

describe("refusals", () => {
  it("a made-up or mangled share token: 404 before anything is read, in the page's or the live page's form", async () => {
    const forged = `${shareToken.slice(0, -1)}${shareToken.endsWith("a") ? "b" : "a"}`;
    for (const token of [forged, "sh_nope", encodeURIComponent("\u202e<x>")]) {
      const page = await get(`/s/${token}`);
      expect(page.status).toBe(404);
      expect(await page.text()).toContain("no longer shared");
      expect(await (await get(`/s/${token}/blocks`)).text()).toBe("This workflow is no longer shared.");
      expect((await get(`/s/${token}/export.json`)).status).toBe(404);
      expect(await live(`/s/${token}/ws`, {})).toBe(404);
    }
  });

  it("input is checked for its form before the reader is resolved", async () => {
    expect(await (await get(`/s/${shareToken}?after=%00`)).text()).toMatch(/^INPUT_VALIDATION_ERROR: after: /);
    expect(await (await get(`/s/sh_nope/files/${taskId}?from=-1`)).text()).toMatch(/^INPUT_VALIDATION_ERROR: from: /);
    expect((await get(`/s/${shareToken}/ws`)).status).toBe(426);
    expect((await get(`/w/${workflowId}/ws?after=x`, { Upgrade: "websocket" })).status).toBe(400);
  });

  it("another account's session or token, and a workflow that is none: not found, in each mount's form", async () => {
    const globex = { Cookie: await signIn(TOKENS.globex) };
    for (const id of [workflowId, "wf_aaaaaaaaaaaaaaaaaaaa", "nope"]) {
      const page = await get(`/w/${id}`, globex);
      expect([page.status, await page.text()]).toEqual([404, expect.stringContaining("No such workflow in this account")]);
      for (const suffix of ["/blocks", "/export.json", "/export.md", "/export.agent-trace.json"]) {
        const read = await get(`/w/${id}${suffix}`, globex);
        expect([read.status, await read.text()]).toEqual([404, "No such workflow in this account, or you are signed out."]);
      }
      expect((await get(`/w/${id}/files/${taskId}`, globex)).status).toBe(404);
      const api = await get(`/api/workflows/${id}/export.json`, bearer(TOKENS.globex));
      expect([api.status, await api.json()]).toEqual([
        404,
        { code: "NOT_FOUND", message: `workflow_id: no workflow ${id} in this account` },
      ]);
    }
    // The object refuses another account's session on the live feed.
    expect(await live(`/w/${workflowId}/ws`, globex)).toBe(403);
  });

  it("without a session: the owner view sends the reader to sign in, what it fetches answers 404; without a token, 401", async () => {
    const page = await get(`/w/${workflowId}`);
    expect([page.status, page.headers.get("Location")]).toEqual([303, "/login"]);
    for (const suffix of ["/blocks", `/files/${taskId}`, "/export.json", "/export.md", "/export.agent-trace.json"]) {
      expect((await get(`/w/${workflowId}${suffix}`)).status).toBe(404);
    }
    expect(await live(`/w/${workflowId}/ws`, {})).toBe(404);
    const api = await get(`/api/workflows/${workflowId}/export.json`);
    expect([api.status, await api.json()]).toEqual([401, expect.objectContaining({ code: "UNAUTHORIZED" })]);
  });

  it("a credential without the read scope (admin only): refused by the access matrix at every mount", async () => {
    const admin = { Cookie: await signIn(managed.admin) };
    const page = await get(`/w/${workflowId}`, admin);
    expect([page.status, await page.text()]).toEqual([403, expect.stringContaining("lacks the read scope")]);
    for (const suffix of ["/blocks", "/export.json"]) expect((await get(`/w/${workflowId}${suffix}`, admin)).status).toBe(404);
    expect(await live(`/w/${workflowId}/ws`, admin)).toBe(404);
    const api = await get(`/api/workflows/${workflowId}/export.md`, bearer(managed.admin));
    expect([api.status, await api.json()]).toEqual([
      403,
      { code: "FORBIDDEN", message: "this credential lacks the read scope (read or write)" },
    ]);
  });

  it("a revoked link: 410 at every read of it (HEAD too), while the owner and tokens read on; a rotated-away one: 404", async () => {
    const { id, token } = await recordWorkflow("Revoked later");
    const rotatedTo = await shareAction(id, "rotate");
    for (const suffix of ["", "/blocks", "/export.json", "/export.md"]) expect((await get(`/s/${token}${suffix}`)).status).toBe(404);
    expect(await live(`/s/${token}/ws`, {})).toBe(404);
    expect(await shareAction(id, "revoke")).toBeNull();
    for (const suffix of ["", "/blocks", `/files/${taskId}`, "/export.json", "/export.md", "/export.agent-trace.json"]) {
      const read = await get(`/s/${rotatedTo}${suffix}`);
      expect(read.status, suffix).toBe(410);
      expect(await read.text()).not.toContain("Revoked later");
    }
    expect((await get(`/s/${rotatedTo}/blocks`, {}, "HEAD")).status).toBe(410);
    expect(await live(`/s/${rotatedTo}/ws`, {})).toBe(410);
    const cookie = { Cookie: await signIn() };
    expect(await (await get(`/w/${id}`, cookie)).text()).toContain("Nobody can open this workflow by link now.");
    expect((await get(`/api/workflows/${id}/export.json`, bearer(managed.read))).status).toBe(200);
  });
});
