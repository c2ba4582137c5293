/**
 * The auditors' reads through the real Worker: the signed exports with a bearer token (the owner's
 * documents, for the token's own account only, charged to the export budget) and the JSON Schema
 * every endpoint serves. Scopes are in ./scopes.test.ts's matrix.
 */
import { env } from "cloudflare:test";
import type { SignedStatement } from "@waymark/protocol/statement";
import { checkExport } from "@waymark/protocol/verify";
import { beforeAll, describe, expect, it } from "vitest";
import exportSchema from "../../docs/schemas/export-v1.json";
import policySchema from "../../docs/schemas/policy-v1.json";
import { publishedKeys } from "../../src/signing";
import { callTool, connect } from "../support/mcp-client";
import { ORIGIN, signIn, TOKENS, workerFetch, workerTarget } from "../support/worker";

let workflowId = "";

const get = (path: string, token: string | null = TOKENS.acme, headers: Record<string, string> = {}) =>
  workerFetch(`${ORIGIN}${path}`, { headers: { ...(token === null ? {} : { Authorization: `Bearer ${token}` }), ...headers } });

beforeAll(async () => {
  const client = await connect(workerTarget(TOKENS.acme));
  workflowId = String((await callTool(client, "start_workflow", { name: "Audited" })).structured.workflow_id);
  const task = await callTool(client, "start_task", { workflow_id: workflowId, name: "T", goal: "G" });
  await callTool(client, "complete_task", { task_id: task.structured.task_id, status: "success", outcome: { summary: "Done" } });
  await client.close();
});

/** A document without the parts that differ between two downloads (the statement's time and signature). */
function unsigned(text: string): { document: Record<string, unknown>; content: unknown } {
  const { statement, ...document } = JSON.parse(text) as { statement: SignedStatement };
  return { document, content: statement.payload.content };
}

describe("exports for a bearer token", () => {
  it("are the owner's documents, signed", async () => {
    const response = await get(`/api/workflows/${workflowId}/export.json`);
    expect(response.status).toBe(200);
    expect(response.headers.get("Content-Type")).toBe("application/json; charset=utf-8");
    expect(response.headers.get("Cache-Control")).toBe("no-store");
    const text = await response.text();
    expect(await checkExport(JSON.parse(text), { keys: await publishedKeys(env as Env), signers: null })).toMatchObject({
      problems: [],
      signature: { status: "ok" },
    });
    const owner = await (await workerFetch(`${ORIGIN}/w/${workflowId}/export.json`, { headers: { Cookie: await signIn() } })).text();
    expect(unsigned(text)).toEqual(unsigned(owner));

    const markdown = await get(`/api/workflows/${workflowId}/export.md`);
    expect(markdown.headers.get("Content-Type")).toBe("text/markdown; charset=utf-8");
    const md = await markdown.text();
    expect(md).toContain("#### 1 T");
    expect(md).toContain(`signed with key \`${(await publishedKeys(env as Env))[0]?.kid}\``);

    // The Agent Trace export: a task without commits has no record (a JSON array all the same).
    const trace = await get(`/api/workflows/${workflowId}/export.agent-trace.json`);
    expect(trace.status).toBe(200);
    expect(trace.headers.get("Cache-Control")).toBe("no-store");
    expect(await trace.json()).toEqual([]);
  });

  it("answer 401 without a token, 404 for another account's workflow or no workflow, in {code, message}", async () => {
    expect(await (await get(`/api/workflows/${workflowId}/export.json`, null)).json()).toMatchObject({ code: "UNAUTHORIZED" });
    expect(await (await get(`/api/workflows/${workflowId}/export.agent-trace.json`, null)).json()).toMatchObject({ code: "UNAUTHORIZED" });
    for (const path of [
      `/api/workflows/${workflowId}/export.json`,
      `/api/workflows/${workflowId}/export.agent-trace.json`,
      "/api/workflows/wf_aaaaaaaaaaaaaaaaaaaa/export.md",
      "/api/workflows/nope/export.json",
    ]) {
      const response = await get(path, TOKENS.globex);
      expect(response.status).toBe(404);
      expect(await response.json()).toEqual({
        code: "NOT_FOUND",
        message: expect.stringMatching(/^workflow_id: no workflow \S+ in this account$/),
      });
    }
  });

  it("are charged to the account's export budget: past it, 429 with Retry-After", async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 25 && statuses.at(-1) !== 429; i++) {
      const response = await get(`/api/workflows/${workflowId}/export.md`, TOKENS.globex);
      statuses.push(response.status);
      await response.body?.cancel();
    }
    expect(statuses.at(-1)).toBe(429);
    expect(statuses.slice(0, -1).every((status) => status === 404)).toBe(true);
    const refused = await get(`/api/workflows/${workflowId}/export.json`, TOKENS.globex);
    expect(refused.headers.get("Retry-After")).toBe("60");
    expect(await refused.json()).toMatchObject({ code: "RATE_LIMITED" });
  });
});

describe("the export's JSON Schema", () => {
  it("is served by every endpoint, as docs/schemas/export-v1.json holds it", async () => {
    const response = await get("/schemas/export-v1.json", null);
    expect(response.status).toBe(200);
    expect(response.headers.get("Content-Type")).toBe("application/schema+json");
    expect(response.headers.get("Cache-Control")).toBe("public, max-age=3600");
    expect(await response.json()).toEqual(exportSchema);
  });

  it("and the policy file's schema, as docs/schemas/policy-v1.json holds it", async () => {
    const response = await get("/schemas/policy-v1.json", null);
    expect(response.status).toBe(200);
    expect(response.headers.get("Content-Type")).toBe("application/schema+json");
    expect(await response.json()).toEqual(policySchema);
  });
});
