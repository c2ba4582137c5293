/**
 * Insights from two real agents (docs/insights.md): the pinned Claude Code and Codex CLIs
 * (test/support/agent-clis.ts), each set up as the README says (`waymark init` from the endpoint's
 * tarball) in a repository of its own, against one real `wrangler dev` account and a scripted
 * model each (test/support/model-server.ts). Claude Code runs eight tasks on a device the owner
 * approved: each writes a module, runs `npm test` after its last edit, commits; one rewrites two
 * lines an earlier task wrote. Codex runs five on a device nobody approved, skips its tests while
 * claiming they passed, and leaves a file outside its areas once. A person reviews on the page.
 * Then the API (a read token), the CSV and the page in Chromium must show each agent's figures
 * with their sources as the records have them, the comparison must tell the agents apart on tests
 * and not on their claims, and axe finds nothing on the page.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import type { InsightFigure, InsightFigureId, InsightGroup, Insights } from "@waymark/protocol/views/insights";
import { insightsSchema } from "@waymark/protocol/views/insights";
import type { TaskView } from "@waymark/protocol/views/task";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  type AgentCli,
  type AgentRun,
  agentClis,
  agentEnv,
  claudeEnv,
  claudePrint,
  codexExec,
  codexModelConfig,
  runAgent,
  stopAgents,
} from "../support/agent-clis.ts";
import { type AgentProject, agentProject } from "../support/agent-project.ts";
import { violationsInEveryMode } from "../support/axe.ts";
import { launchChromium, skipBrowser } from "../support/chromium.ts";
import { type DevServer, startDevServer } from "../support/dev-server.ts";
import { eventually } from "../support/eventually.ts";
import { comparedText, figureCells, figureColumns } from "../support/insights-page.ts";
import { ModelServer, type Turn, type Usage } from "../support/model-server.ts";
import { ownerSession, reviewTask } from "../support/owner-session.ts";
import { visibleText } from "../support/page-text.ts";
import { ensureCurrentHelperTarball } from "../support/worker-build-setup.ts";

const CLAUDE_MODEL = "claude-sonnet-4-5-20250929";
const CODEX_MODEL = "gpt-5.5";
const CLAUDE_TASKS = 8;
const CODEX_TASKS = 5;
const SESSION_MS = 600_000;
const M = "mcp__waymark__";
const CODEX_NS = "mcp__waymark";

const clis = agentClis();
const missing = clis.claude.skip ?? clis.codex.skip;

const usage = (n: number): Usage => ({
  input_tokens: 900 + n,
  output_tokens: 40 + n,
  cache_creation_input_tokens: 0,
  cache_read_input_tokens: 0,
});
/** A module of six lines, each its own. */
const moduleText = (name: string) => `// ${name}\nconst ${name} = {\n  one: 1,\n  two: 2,\n};\nmodule.exports = { ${name} };\n`;

const PROJECT_FILES = {
  "package.json": '{ "name": "modules", "private": true, "scripts": { "test": "node test.js" } }\n',
  // Every module under src/ loads: the test passes as long as the agents write valid JavaScript.
  "test.js":
    'const { readdirSync } = require("node:fs");\nfor (const f of readdirSync("src")) require("./src/" + f);\nconsole.log("ok");\n',
  "src/index.js": "module.exports = {};\n",
};

let server: DevServer;
let agentToken = "";
let readToken = "";
const model = {
  claude: new ModelServer({ model: CLAUDE_MODEL, latencyMs: 40 }),
  codex: new ModelServer({ model: CODEX_MODEL, latencyMs: 40 }),
};
const projects: AgentProject[] = [];
const ids = { claude: { workflow: "", tasks: [] as string[] }, codex: { workflow: "", tasks: [] as string[] } };

async function api(path: string, init: RequestInit & { token?: string } = {}): Promise<Response> {
  return fetch(`${server.url}${path}`, {
    ...init,
    headers: { Authorization: `Bearer ${init.token ?? server.token}`, ...(init.headers ?? {}) },
  });
}

async function managedToken(name: string, scopes: string[]): Promise<string> {
  const response = await api("/api/tokens", {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify({ name, scopes }),
  });
  expect(response.status, await response.clone().text()).toBe(201);
  return ((await response.json()) as { token: string }).token;
}

/** The owner approves the device key `waymark init` made for this project's user. */
async function approveDevice(project: AgentProject): Promise<void> {
  const file = JSON.parse(readFileSync(join(project.home, ".config", "waymark", "device-key.json"), "utf8")) as { key: { x: string } };
  const response = await api("/api/devices", {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify({ name: "claude machine", key: file.key.x }),
  });
  expect(response.status, await response.clone().text()).toBe(201);
}

function expectPlayed(server: ModelServer, run: AgentRun): void {
  expect(run.timedOut, run.stderr).toBe(false);
  expect(server.errors).toEqual([]);
  expect(run.code, run.stderr).toBe(0);
  expect(server.remaining()).toBe(0);
}

/** Claude Code's session: eight tasks, each a module, `npm test` after the last edit, a commit; task 2 also rewrites two of task 0's lines. */
function claudeScript(repo: string): Turn[] {
  const turns: Turn[] = [
    {
      calls: [{ name: "ToolSearch", input: { query: `select:${M}start_workflow,${M}start_task,${M}complete_task`, max_results: 5 } }],
      usage: usage(0),
      latencyMs: 1000,
      again: (conversation) => !(conversation.results("ToolSearch").at(-1) ?? "").split("\n").includes(`${M}start_task`),
    },
    {
      calls: [{ name: `${M}start_workflow`, input: { name: "Modules by Claude", description: "Insights: tests after every edit" } }],
      usage: usage(1),
    },
  ];
  const bash = (command: string): Turn["calls"] => [{ name: "Bash", input: { command, description: "Run" } }];
  for (let i = 0; i < CLAUDE_TASKS; i++) {
    const name = `claude${i}`;
    turns.push({
      calls: [
        {
          name: `${M}start_task`,
          input: (conversation) => ({
            workflow_id: conversation.field(`${M}start_workflow`, "workflow_id"),
            name: `Add ${name}`,
            goal: `A module ${name}`,
            areas: ["src/**"],
          }),
        },
      ],
      usage: usage(10 * i + 2),
    });
    turns.push({
      calls: [{ name: "Write", input: { file_path: join(repo, "src", `${name}.js`), content: moduleText(name) } }],
      usage: usage(10 * i + 3),
    });
    if (i === 2) {
      const first = join(repo, "src", "claude0.js");
      turns.push({ calls: [{ name: "Read", input: { file_path: first } }], usage: usage(10 * i + 4) });
      turns.push({
        calls: [{ name: "Edit", input: { file_path: first, old_string: "  one: 1,\n  two: 2,", new_string: "  one: 10,\n  two: 20," } }],
        usage: usage(10 * i + 5),
      });
    }
    turns.push({ calls: bash("npm test"), usage: usage(10 * i + 6) });
    turns.push({ calls: bash(`git add -A && git commit -q -m 'Add ${name}'`), usage: usage(10 * i + 7) });
    turns.push({
      calls: [
        {
          name: `${M}complete_task`,
          input: (conversation) => ({
            task_id: conversation.field(`${M}start_task`, "task_id"),
            status: "success",
            outcome: { summary: `Added ${name}; npm test passes.` },
            metadata: { tests_status: "passed", commands_executed: ["npm test"] },
          }),
        },
      ],
      usage: usage(10 * i + 8),
    });
  }
  turns.push({ text: "All modules added.", usage: usage(99) });
  return turns;
}

/** Codex's session: five tasks, each a module by apply_patch and a commit, no test run, tests claimed; task 1 also writes a file outside its areas. */
function codexScript(): Turn[] {
  const turns: Turn[] = [
    {
      calls: [{ name: "tool_search", kind: "tool_search", input: { query: "waymark workflow task", limit: 8 } }],
      usage: usage(0),
      latencyMs: 1000,
      again: (conversation) => !(conversation.results("tool_search").at(-1) ?? "").includes('"start_task"'),
    },
    {
      calls: [{ name: "start_workflow", namespace: CODEX_NS, input: { name: "Modules by Codex", description: "Insights: tests skipped" } }],
      usage: usage(1),
    },
  ];
  for (let i = 0; i < CODEX_TASKS; i++) {
    const name = `codex${i}`;
    turns.push({
      calls: [
        {
          name: "start_task",
          namespace: CODEX_NS,
          input: (conversation) => ({
            workflow_id: conversation.field("start_workflow", "workflow_id"),
            name: `Add ${name}`,
            goal: `A module ${name}`,
            areas: ["src/**"],
          }),
        },
      ],
      usage: usage(10 * i + 2),
    });
    const patch = [
      "*** Begin Patch",
      `*** Add File: src/${name}.js`,
      ...moduleText(name)
        .trimEnd()
        .split("\n")
        .map((line) => `+${line}`),
    ];
    if (i === 1) patch.push("*** Add File: docs/notes.md", "+Notes nobody asked for.");
    patch.push("*** End Patch", "");
    turns.push({ calls: [{ name: "apply_patch", kind: "freeform", input: patch.join("\n") }], usage: usage(10 * i + 3) });
    turns.push({
      calls: [{ name: "exec_command", input: { cmd: `git add -A && git commit -q -m 'Add ${name}'` } }],
      usage: usage(10 * i + 4),
    });
    turns.push({
      calls: [
        {
          name: "complete_task",
          namespace: CODEX_NS,
          input: (conversation) => ({
            task_id: conversation.field("start_task", "task_id"),
            status: "success",
            outcome: { summary: `Added ${name}. All tests pass.` },
            metadata: { tests_status: "passed" },
          }),
        },
      ],
      usage: usage(10 * i + 5),
    });
  }
  turns.push({ text: "All modules added.", usage: usage(99) });
  return turns;
}

const groupOf = (insights: Insights, agent: string): InsightGroup => {
  const group = insights.groups.find((g) => g.key.agent === agent);
  expect(group, `a group for ${agent} in ${insights.groups.map((g) => g.label).join(", ")}`).toBeDefined();
  return group as InsightGroup;
};
const fig = (group: InsightGroup, id: InsightFigureId): InsightFigure => group.figures.find((f) => f.id === id) as InsightFigure;

async function taskViews(workflowId: string): Promise<TaskView[]> {
  const response = await api(`/api/workflows/${workflowId}/export.json`, { token: readToken });
  expect(response.status).toBe(200);
  return ((await response.json()) as { tasks: TaskView[] }).tasks;
}

describe.skipIf(missing !== undefined)("Insights from the real Claude Code and Codex", () => {
  beforeAll(async () => {
    ensureCurrentHelperTarball();
    server = await startDevServer();
    await Promise.all([model.claude.start(), model.codex.start()]);
    // The agents record with a token of their own; the person reviews signed in with the owner's.
    agentToken = await managedToken("agents", ["write"]);
    readToken = await managedToken("insights reader", ["read"]);
  }, 240_000);

  afterAll(async () => {
    stopAgents();
    await Promise.all([model.claude.stop(), model.codex.stop()]);
    await server?.stop();
    for (const project of projects) project.remove();
  });

  it(
    "Claude Code, on an approved device, completes eight tasks running its tests after each last edit",
    async () => {
      const project = await agentProject(server, { agent: "claude", files: PROJECT_FILES });
      projects.push(project);
      expect(project.init?.code, project.init?.stderr).toBe(0);
      await approveDevice(project);
      model.claude.play(claudeScript(project.repo));
      const run = await runAgent(
        clis.claude.cli as AgentCli,
        claudePrint("Add the modules and record the work in Waymark.", ["mcp__waymark", "Bash", "Write", "Edit", "Read"]),
        { cwd: project.repo, env: claudeEnv(project.home, model.claude.url, { WAYMARK_TOKEN: agentToken }), timeoutMs: SESSION_MS },
      );
      expectPlayed(model.claude, run);
      ids.claude.workflow = String(model.claude.inputOf(`${M}start_task`).workflow_id);
      expect(project.git("log", "--format=%s").trim().split("\n")).toHaveLength(CLAUDE_TASKS + 1);
    },
    SESSION_MS + 200_000,
  );

  it(
    "Codex, on a device nobody approved, completes five tasks without running its tests, one with a file outside its areas",
    async () => {
      const project = await agentProject(server, {
        agent: "codex",
        files: PROJECT_FILES,
        home: { ".codex/config.toml": codexModelConfig(model.codex.url, CODEX_MODEL) },
      });
      projects.push(project);
      expect(project.init?.code, project.init?.stderr).toBe(0);
      model.codex.play(codexScript());
      const run = await runAgent(clis.codex.cli as AgentCli, codexExec("Add the modules and record the work in Waymark.", "exec"), {
        cwd: project.repo,
        env: agentEnv(project.home, { SCRIPTED_MODEL_KEY: "scripted-model", WAYMARK_TOKEN: agentToken }),
        timeoutMs: SESSION_MS,
      });
      expectPlayed(model.codex, run);
      ids.codex.workflow = String(model.codex.inputOf("start_task").workflow_id);
      expect(project.git("log", "--format=%s").trim().split("\n")).toHaveLength(CODEX_TASKS + 1);
    },
    SESSION_MS + 200_000,
  );

  it("a person reviews on the page: five of Claude Code's tasks approved, changes requested on two of Codex's", async () => {
    for (const agent of ["claude", "codex"] as const) {
      const tasks = (await taskViews(ids[agent].workflow)).filter((task) => task.parent_task_id === null);
      ids[agent].tasks = tasks.map((task) => task.id);
    }
    expect(ids.claude.tasks).toHaveLength(CLAUDE_TASKS);
    expect(ids.codex.tasks).toHaveLength(CODEX_TASKS);
    const cookie = await ownerSession(server.url, server.token);
    const review = (workflow: string, task: string, verdict: "approved" | "changes_requested") =>
      reviewTask(server.url, cookie, { workflow, task, verdict, body: verdict === "approved" ? "Looks right." : "Run the tests." });
    for (const task of ids.claude.tasks.slice(0, 5)) await review(ids.claude.workflow, task, "approved");
    for (const task of ids.codex.tasks.slice(0, 2)) await review(ids.codex.workflow, task, "changes_requested");
  });

  it("the API gives each agent's figures with their sources, as the records have them", async () => {
    const insights = await eventually(
      "the rollups counting both sessions and the reviews",
      async () => {
        const response = await api("/api/insights?by=agent", { token: readToken });
        const parsed = insightsSchema.parse(await response.json());
        const reviewed = parsed.groups.reduce((sum, g) => sum + (fig(g, "reviewed").part ?? 0), 0);
        return parsed.total.tasks === CLAUDE_TASKS + CODEX_TASKS && reviewed === 7 ? parsed : null;
      },
      30_000,
    );
    const claude = groupOf(insights, "claude-code");
    const codex = groupOf(insights, "codex");
    expect([claude.tasks, codex.tasks]).toEqual([CLAUDE_TASKS, CODEX_TASKS]);
    // What each agent said of its work: a claim, 100% for both.
    const n = CLAUDE_TASKS;
    expect(fig(claude, "claimed_success")).toMatchObject({ value: 1, rests_on: n, sources: { claimed: n } });
    expect(fig(codex, "claimed_success")).toMatchObject({ value: 1, rests_on: 5, sources: { claimed: 5 } });
    // What the hooks observed: Claude's tests after every last edit, signed by its approved device; Codex ran none (claimed: no approved device).
    expect(fig(claude, "tests_passed")).toMatchObject({
      value: 1,
      part: n,
      rests_on: n,
      sources: { signed: n, claimed: 0, not_observed: 0 },
    });
    expect(fig(codex, "tests_passed")).toMatchObject({
      value: 0,
      part: 0,
      rests_on: 5,
      sources: { signed: 0, claimed: 5, not_observed: 0 },
    });
    expect(fig(codex, "success_unbacked")).toMatchObject({ value: 1, part: 5 });
    expect(fig(claude, "outside_areas")).toMatchObject({ value: 0, rests_on: n, sources: { signed: n } });
    expect(fig(codex, "outside_areas")).toMatchObject({ value: 0.2, part: 1, rests_on: 5, sources: { claimed: 5 } });
    // Every added line by the agents' own edit tools.
    expect(fig(claude, "line_share")).toMatchObject({ value: 1, rests_on: n, sources: { signed: n } });
    expect(fig(codex, "line_share")).toMatchObject({ value: 1, rests_on: 5, sources: { claimed: 5 } });
    // People's verdicts, observed by Waymark.
    expect(fig(claude, "approved")).toMatchObject({ part: 5, rests_on: n, sources: { observed: n } });
    expect(fig(codex, "changes_requested")).toMatchObject({ part: 2, rests_on: 5 });
    expect(fig(claude, "time_to_verdict")).toMatchObject({ rests_on: 5, sources: { observed: 5 } });
    expect(fig(claude, "time_to_verdict").value).toBeGreaterThan(0);
    expect(fig(codex, "time_to_verdict")).toMatchObject({ value: null, withheld: "fewer than 5 tasks (2)" });
    // Usage from the transcripts: Claude's signed, priced from the dated table.
    expect(fig(claude, "cost_per_task")).toMatchObject({ rests_on: n, sources: { signed: n } });
    expect(fig(claude, "cost_per_accepted").whole).toBe(5);
    expect(fig(codex, "tokens_per_task")).toMatchObject({ rests_on: 5, sources: { claimed: 5 } });

    // Durability as the helper observed it with git at later completions: the figure is the
    // records' latest observation per task, and task 0 lost the two lines task 2 rewrote.
    const claudeTasks = (await taskViews(ids.claude.workflow)).filter((t) => t.parent_task_id === null);
    const latest = new Map<string, { at: string; recorded: number; present: number }>();
    for (const task of claudeTasks)
      for (const seen of task.durability ?? []) if ((latest.get(seen.task_id)?.at ?? "") < seen.at) latest.set(seen.task_id, seen);
    expect(latest.get(ids.claude.tasks[0] as string)).toMatchObject({ recorded: 6, present: 4 });
    const observed = [...latest.values()];
    expect(observed.length).toBeGreaterThanOrEqual(5);
    expect(fig(claude, "durability")).toMatchObject({
      rests_on: observed.length,
      part: observed.reduce((sum, seen) => sum + seen.present, 0),
      whole: observed.reduce((sum, seen) => sum + seen.recorded, 0),
      sources: { signed: observed.length },
    });
    expect(fig(claude, "durability").value).toBeLessThan(1);
    // Codex's five tasks leave at most three observed: withheld, and said why.
    expect(fig(codex, "durability").value).toBeNull();
    expect(fig(codex, "durability").withheld).toMatch(/^fewer than 5 tasks \(\d\)$/);

    // The comparison tells them apart on the tests observed, not on what they claimed.
    const compared = await api(
      `/api/insights?by=agent&a=${encodeURIComponent("agent=claude-code")}&b=${encodeURIComponent("agent=codex")}`,
      { token: readToken },
    );
    const comparison = insightsSchema.parse(await compared.json()).comparison;
    const row = (id: InsightFigureId) => comparison?.rows.find((r) => r.figure === id);
    expect(row("tests_passed")).toMatchObject({ difference: 1, method: "newcombe", verdict: "a_higher" });
    expect(row("claimed_success")).toMatchObject({ difference: 0, verdict: "cannot_tell_apart" });
    expect(row("line_share")?.verdict).not.toBe("a_higher");
  });

  it("the CSV carries the same figures and sources", async () => {
    const response = await api("/api/insights.csv?by=agent", { token: readToken });
    expect(response.status).toBe(200);
    const rows = (await response.text())
      .trim()
      .split("\r\n")
      .map((line) => line.split(","));
    const header = rows[0] as string[];
    const cell = (agent: string, figure: string, column: string) => {
      const found = rows.find((r) => r[3] === `"${agent}"` && r[7] === figure);
      return found?.[header.indexOf(column)];
    };
    expect([cell("claude-code", "tests_passed", "value"), cell("claude-code", "tests_passed", "signed")]).toEqual([
      "1",
      String(CLAUDE_TASKS),
    ]);
    expect([cell("codex", "tests_passed", "value"), cell("codex", "tests_passed", "claimed")]).toEqual(["0", "5"]);
    expect([cell("codex", "outside_areas", "value"), cell("codex", "outside_areas", "rests_on")]).toEqual(["0.2", "5"]);
    expect(cell("codex", "durability", "withheld")).toMatch(/^"fewer than 5 tasks \(\d\)"$/);
  });

  it.skipIf(skipBrowser)(
    "the page in Chromium shows the same, and axe finds nothing (light and dark, 1280 and 375 px)",
    async () => {
      const browser = await launchChromium();
      try {
        const page = await (await browser.newContext()).newPage();
        await page.goto(`${server.url}/login`);
        await page.fill('input[name="token"]', server.token);
        await Promise.all([page.waitForURL("**/dashboard"), page.click('button[type="submit"]')]);
        await page.goto(`${server.url}/dashboard/insights?by=agent`);
        const columns = await figureColumns(page);
        const column = (agent: string) => columns.indexOf(agent);
        const cells = (label: string) => figureCells(page, label);
        const tests = await cells("A test run passed after the last edit");
        expect(tests[column("claude-code")]).toMatch(
          new RegExp(`^100% \\(95% CI \\d+%–100%\\) ${CLAUDE_TASKS} of ${CLAUDE_TASKS} tasks computed and signed ${CLAUDE_TASKS}$`),
        );
        expect(tests[column("codex")]).toMatch(/^0% \(95% CI 0%–\d+%\) 0 of 5 tasks claimed 5$/);
        const outside = await cells("Changed files outside the declared areas");
        expect(outside[column("codex")]).toMatch(/^20% .* 1 of 5 tasks claimed 5$/);
        const lasting = await cells("The agent's lines still present at the latest observation");
        expect(lasting[column("codex")]).toMatch(/^not shown fewer than 5 tasks \(\d\)$/);
        expect(lasting[column("claude-code")]).toMatch(/ lines of \d+, (\d) tasks computed and signed \1 · not observed \d$/);
        const compared = (label: string) => comparedText(page, label);
        expect(await compared("A test run passed after the last edit")).toMatch(
          /^\+100 points \(95% CI \+\d+ points to \+100 points\): higher for claude-code$/,
        );
        expect(await compared("Called successful by the agent")).toMatch(
          /^\+0 points \(95% CI −\d+ points to \+\d+ points\): the data cannot tell them apart$/,
        );
        expect(visibleText(await page.content())).toContain("Differences of the shares, in percentage points");
        expect(await violationsInEveryMode(page, "insights from real agents")).toEqual([]);
        // A look at the page as a reviewer at a desk sees it (WAYMARK_INSIGHTS_SCREENSHOT=<file.png>).
        const screenshot = process.env.WAYMARK_INSIGHTS_SCREENSHOT;
        if (screenshot) {
          await page.emulateMedia({ colorScheme: "light" });
          await page.setViewportSize({ width: 1280, height: 900 });
          await page.screenshot({ path: screenshot, fullPage: true });
        }
      } finally {
        await browser.close();
      }
    },
    120_000,
  );
});
