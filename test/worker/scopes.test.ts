import type { Client } from "@modelcontextprotocol/client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ACTION_SCOPES, type Action, allows, may, type Scope, scopeMissing } from "../../src/domain/access-scopes";
import { callTool, connect } from "../support/mcp-client";
import { ORIGIN, TOKENS, workerFetch, workerTarget } from "../support/worker";

/**
 * Every route and tool against every kind of credential, through the real Worker
 * (SELF.fetch in workerd) and real MCP clients: managed tokens of each single scope,
 * created through /api/tokens with the bootstrap token, and the bootstrap token itself.
 */
type Credential = "read" | "write" | "admin" | "bootstrap";
const CREDENTIALS: Credential[] = ["read", "write", "admin", "bootstrap"];
const scopesOf = (credential: Credential): Scope[] => (credential === "bootstrap" ? ["read", "write", "admin"] : [credential]);

const tokens = {} as Record<Credential, string>;
let workflowId = "";

async function api(method: string, path: string, token: string, body?: unknown) {
  return workerFetch(`${ORIGIN}${path}`, {
    method,
    headers: { Authorization: `Bearer ${token}`, ...(body === undefined ? {} : { "Content-Type": "application/json" }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
}

async function createToken(scopes: Scope[], name = `matrix ${scopes.join(" ")}`): Promise<string> {
  const response = await api("POST", "/api/tokens", TOKENS.acme, { name, scopes });
  expect(response.status).toBe(201);
  return ((await response.json()) as { token: string }).token;
}

beforeAll(async () => {
  tokens.bootstrap = TOKENS.acme;
  for (const scope of ["read", "write", "admin"] as const) tokens[scope] = await createToken([scope]);
  const client = await connect(workerTarget(TOKENS.acme));
  const started = await callTool(client, "start_workflow", { name: "scope matrix" });
  workflowId = String(started.structured.workflow_id);
  await client.close();
});

/** Each route and the action of the access matrix (src/domain/access-scopes.ts) it performs. */
const ROUTES: [string, string, () => string, Action, unknown?][] = [
  ["GET", "/api/search?q=matrix", () => "/api/search?q=matrix", "workflow.read"],
  ["GET", "/api/insights", () => "/api/insights", "workflow.read"],
  ["GET", "/api/insights.csv", () => "/api/insights.csv", "workflow.read"],
  ["GET", "/api/workflows/:id/share", () => `/api/workflows/${workflowId}/share`, "share.read"],
  ["GET", "/api/workflows/:id/export.json", () => `/api/workflows/${workflowId}/export.json`, "workflow.read"],
  ["GET", "/api/workflows/:id/export.md", () => `/api/workflows/${workflowId}/export.md`, "workflow.read"],
  [
    "POST",
    "/api/workflows/:id/share",
    () => `/api/workflows/${workflowId}/share`,
    "share.change",
    { action: "set_expiry", expires_in_seconds: null },
  ],
  ["GET", "/api/webhooks", () => "/api/webhooks", "webhook.manage"],
  [
    "POST",
    "/api/webhooks",
    () => "/api/webhooks",
    "webhook.create",
    { url: "https://hooks.example/waymark", events: ["workflow.completed"] },
  ],
  ["GET", "/api/tokens", () => "/api/tokens", "token.manage"],
  // A token holding only admin: every credential allowed to create tokens holds that much.
  ["POST", "/api/tokens", () => "/api/tokens", "token.create", { name: "made by the matrix", scopes: ["admin"] }],
];

const routeMatrix = ROUTES.flatMap(([method, name, path, action, body]) =>
  CREDENTIALS.map((credential) => ({
    method,
    name,
    path,
    action,
    needs: ACTION_SCOPES[action].join("+"),
    body,
    credential,
    allowed: may(scopesOf(credential), action),
  })),
);

describe("HTTP routes × scopes", () => {
  it.each(routeMatrix)("$method $name with a $credential token (needs $needs) → allowed: $allowed", async (row) => {
    const response = await api(row.method, row.path(), tokens[row.credential], row.body);
    if (row.allowed) {
      expect(response.status, await response.clone().text()).toBeLessThan(300);
    } else {
      const missing = scopeMissing(scopesOf(row.credential), row.action);
      expect(response.status).toBe(403);
      expect(await response.json()).toEqual({
        code: "FORBIDDEN",
        message: `this credential lacks the ${missing} scope${missing === "read" ? " (read or write)" : ""}`,
      });
    }
  });

  it("DELETE /api/tokens/:id needs admin", async () => {
    const victim = await createToken(["read"], "to revoke");
    const id = victim.split("_").at(-2) ?? "";
    for (const credential of ["read", "write"] as const)
      expect((await api("DELETE", `/api/tokens/${id}`, tokens[credential])).status).toBe(403);
    expect((await api("DELETE", `/api/tokens/${id}`, tokens.admin)).status).toBe(200);
  });
});

/** Arguments each tool accepts far enough to prove the scope check let it through (a validation error is past it). */
const TOOLS: [string, Scope][] = [
  ["start_workflow", "write"],
  ["start_task", "write"],
  ["log_decision", "write"],
  ["log_issue", "write"],
  ["log_milestone", "write"],
  ["complete_task", "write"],
  ["complete_workflow", "write"],
  ["get_workflow", "read"],
];

describe("MCP tools and resources × scopes", () => {
  const clients = new Map<Credential, Client>();
  beforeAll(async () => {
    for (const credential of CREDENTIALS) clients.set(credential, await connect(workerTarget(tokens[credential])));
  });
  afterAll(async () => {
    for (const client of clients.values()) await client.close();
  });
  const client = (credential: Credential) => clients.get(credential) as Client;

  const toolMatrix = TOOLS.flatMap(([tool, needed]) =>
    CREDENTIALS.map((credential) => ({ tool, needed, credential, allowed: allows(scopesOf(credential), needed) })),
  );

  it.each(toolMatrix)("$tool with a $credential token (needs $needed) → allowed: $allowed", async (row) => {
    const outcome = await callTool(client(row.credential), row.tool, {});
    if (row.allowed) {
      expect(outcome.text).not.toMatch(/^FORBIDDEN/);
    } else {
      expect(outcome.isError).toBe(true);
      expect(outcome.text).toMatch(new RegExp(`^FORBIDDEN: this credential lacks the ${row.needed} scope`));
    }
  });

  it.each(CREDENTIALS.map((credential) => ({ credential, allowed: allows(scopesOf(credential), "read") })))(
    "resources with a $credential token → allowed: $allowed",
    async ({ credential, allowed }) => {
      const reads = [
        () => client(credential).listResources(),
        () => client(credential).readResource({ uri: "waymark://server/info" }),
        () => client(credential).readResource({ uri: `waymark://workflows/${workflowId}` }),
      ];
      for (const read of reads) {
        let error: unknown = null;
        try {
          await read();
        } catch (caught) {
          error = caught;
        }
        if (allowed) expect(error).toBeNull();
        else expect(String(error)).toContain("FORBIDDEN: this credential lacks the read scope");
      }
    },
  );

  it("a write token records a whole task and resumes it (write implies read)", async () => {
    const writer = client("write");
    const wf = await callTool(writer, "start_workflow", { name: "written with a write token" });
    const id = String(wf.structured.workflow_id);
    const task = await callTool(writer, "start_task", { workflow_id: id, name: "t", goal: "g" });
    expect(task.isError, task.text).toBe(false);
    const resumed = await callTool(writer, "get_workflow", { workflow_id: id });
    expect(resumed.isError, resumed.text).toBe(false);
    expect(await callTool(client("read"), "get_workflow", { workflow_id: id })).toMatchObject({ isError: false });
    expect((await callTool(client("read"), "start_task", { workflow_id: id, name: "t2", goal: "g" })).text).toMatch(/^FORBIDDEN/);
  });
});

describe("dashboard sessions carry the scopes of the token they were opened with", () => {
  async function session(token: string): Promise<string> {
    const response = await workerFetch(`${ORIGIN}/login`, {
      method: "POST",
      headers: { "Content-Type": "application/x-www-form-urlencoded", Origin: ORIGIN },
      body: new URLSearchParams({ token }).toString(),
      redirect: "manual",
    });
    expect(response.status).toBe(303);
    return (response.headers.get("Set-Cookie") ?? "").split(";")[0] ?? "";
  }
  const PAGES: [string, string, () => string, Scope, Record<string, string>?][] = [
    ["GET", "/dashboard", () => "/dashboard", "read"],
    ["GET", "/api/search (session)", () => "/api/search?q=matrix", "read"],
    [
      "POST",
      "/dashboard/workflows/:id/share",
      () => `/dashboard/workflows/${workflowId}/share`,
      "write",
      { action: "set_expiry", expires_in_seconds: "" },
    ],
    ["GET", "/dashboard/tokens", () => "/dashboard/tokens", "admin"],
  ];
  const pageMatrix = PAGES.flatMap(([method, name, path, needed, form]) =>
    CREDENTIALS.map((credential) => ({ method, name, path, needed, form, credential, allowed: allows(scopesOf(credential), needed) })),
  );

  it.each(pageMatrix)("$method $name signed in with a $credential token → allowed: $allowed", async (row) => {
    const cookie = await session(tokens[row.credential]);
    const response = await workerFetch(`${ORIGIN}${row.path()}`, {
      method: row.method,
      headers: {
        Cookie: cookie,
        ...(row.form ? { "Content-Type": "application/x-www-form-urlencoded", Origin: ORIGIN } : {}),
      },
      body: row.form ? new URLSearchParams(row.form).toString() : undefined,
      redirect: "manual",
    });
    if (row.allowed) expect(response.status).toBeLessThan(400);
    else expect(response.status).toBe(403);
  });

  it.each([
    ["read", "/dashboard"],
    ["write", "/dashboard"],
    ["admin", "/dashboard/tokens"],
    ["bootstrap", "/dashboard"],
  ] as [Credential, string][])("signing in with a %s token lands on %s", async (credential, landing) => {
    const response = await workerFetch(`${ORIGIN}/login`, {
      method: "POST",
      headers: { "Content-Type": "application/x-www-form-urlencoded", Origin: ORIGIN },
      body: new URLSearchParams({ token: tokens[credential] }).toString(),
      redirect: "manual",
    });
    expect(response.headers.get("Location")).toBe(landing);
  });

  it("revoking the managed token ends the sessions opened with it", async () => {
    const token = await createToken(["read"], "session then revoke");
    const cookie = await session(token);
    expect((await workerFetch(`${ORIGIN}/dashboard`, { headers: { Cookie: cookie }, redirect: "manual" })).status).toBe(200);
    const id = token.split("_").at(-2) ?? "";
    expect((await api("DELETE", `/api/tokens/${id}`, TOKENS.acme)).status).toBe(200);
    const after = await workerFetch(`${ORIGIN}/dashboard`, { headers: { Cookie: cookie }, redirect: "manual" });
    expect(after.status).toBe(303);
    expect(after.headers.get("Location")).toBe("/login");
  });
});
