/**
 * The read model as it is served, parsed through its schemas (@waymark/protocol/views): a workflow
 * recorded through real MCP clients against the shared `wrangler dev` (an agent through the real
 * helper in a real git repository, and a client sending the helper's wire data itself, as any MCP
 * client may), and reviewed by its owner, is read back through every path a reader has: the tool
 * results, get_workflow, the workflow resource and its pages, the events resource, the share
 * link's live feed, /api/workflows and the JSON export (read token, share link, owner). Each
 * sample is parsed strictly where the view is closed, so a field the Worker adds, drops or changes
 * without its schema fails here; the samples are checked to reach every optional part of a task,
 * every event type and every view, and the exports also validate against the published JSON
 * Schema (ajv, 2020-12).
 */
import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import type { Client } from "@modelcontextprotocol/client";
import { EVENT_TYPES, eventsPageSchema, workflowEventSchema } from "@waymark/protocol/views/events";
import { exportSchema } from "@waymark/protocol/views/export";
import { feedbackViewSchema } from "@waymark/protocol/views/feedback";
import {
  accountTotalsSchema,
  dashboardPageSchema,
  dashboardRowSchema,
  recordPageSchema,
  workflowResourceSchema,
} from "@waymark/protocol/views/reads";
import { filesChangedSchema, type TaskView, taskMetricsSchema, taskViewSchema, verificationSchema } from "@waymark/protocol/views/task";
import { totalsSchema } from "@waymark/protocol/views/totals";
import Ajv2020 from "ajv/dist/2020.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { cleanupTempDirs, Repo, tempDir } from "../../client-helper/test/fixtures";
import { BIN, ensureBuilt, SYSTEM_NODE } from "../../client-helper/test/support";
import { connectThroughHelper } from "../support/agents";
import type { DevServer } from "../support/dev-server";
import { eventually } from "../support/eventually";
import { connect, ok } from "../support/mcp-client";
import { readEvents } from "../support/readback";
import { sharedDevServer } from "../support/shared-server";

const BLOB = "b".repeat(40);
const OTHER_BLOB = "c".repeat(40);

let server: DevServer;
let agent: Client;
let direct: Client;
let repo: Repo;
let workflowId: string;
let shareUrl: string;
let cookie: string;
let readToken: string;
/** Every task view a read gave, to check what the samples reach. */
const seenTasks: TaskView[] = [];
/** The tool results of the completions, parsed as they arrived. */
const completions: Record<string, unknown>[] = [];

/** Parses through a schema, failing with zod's paths and rules. */
function parsed<T>(schema: z.ZodType<T>, value: unknown, where: string): T {
  const result = schema.safeParse(value);
  if (!result.success) throw new Error(`${where} does not match its view:\n${z.prettifyError(result.error)}`);
  return result.data;
}

async function api(method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(`${server.url}${path}`, {
    method,
    headers: { Authorization: `Bearer ${server.token}`, "Content-Type": "application/json", ...headers },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    redirect: "manual",
  });
}

/**
 * This machine's device key (`waymark device` makes it), approved by the owner as the admin API
 * does: what the helper then computes reads "computed and signed".
 */
async function approveThisDevice(): Promise<void> {
  const made = spawnSync(SYSTEM_NODE, [BIN, "device"], { encoding: "utf8" });
  expect(made.status, made.stderr).toBe(0);
  const file = join(String(process.env.XDG_CONFIG_HOME), "waymark", "device-key.json");
  const key = (JSON.parse(readFileSync(file, "utf8")) as { key: { x: string } }).key.x;
  const response = await api("POST", "/api/devices", { name: "read-model machine", key });
  expect(response.status, await response.clone().text()).toBe(201);
}

/** The owner's session, signed in as a browser posts the form. */
async function signIn(): Promise<string> {
  const response = await fetch(`${server.url}/login`, {
    method: "POST",
    headers: { "Content-Type": "application/x-www-form-urlencoded", Origin: server.url },
    body: new URLSearchParams({ token: server.token }).toString(),
    redirect: "manual",
  });
  expect(response.status).toBe(303);
  return (response.headers.get("Set-Cookie") ?? "").split(";")[0] ?? "";
}

/** The owner's feedback from the owner view's form. */
async function giveFeedback(target: string, verdict: string, body: string): Promise<void> {
  const response = await fetch(`${server.url}/w/${workflowId}/feedback`, {
    method: "POST",
    headers: { "Content-Type": "application/x-www-form-urlencoded", Origin: server.url, Cookie: cookie },
    body: new URLSearchParams({ target, verdict, body }).toString(),
    redirect: "manual",
  });
  expect(response.status, await response.clone().text()).toBe(303);
}

async function complete(client: Client, args: Record<string, unknown>): Promise<void> {
  const result = await ok(client, "complete_task", args);
  completions.push(result);
}

/** A task sent by a client speaking the helper's wire format itself (recorded as that client's claim). */
function wireChanges(path: string, blob: string, withReview: boolean) {
  return {
    type: "checksum",
    transitions: [{ path, before: null, after: { mode: "100644", blob } }],
    source: { kind: "helper", version: "0.1.0" },
    agent_edits: { paths: [path] },
    commands: {
      runs: [
        { command: "npm test", at: Date.now() - 2000, exit_code: 1, duration_ms: 900, kinds: ["test"] },
        { command: "npm test", at: Date.now() - 1000, exit_code: 0, duration_ms: 800, kinds: ["test"] },
      ],
      omitted: 2,
      last_edit_at: Date.now() - 1500,
    },
    // What it found of an earlier task's lines (durability, docs/insights.md).
    ...(withReview
      ? {
          durability: [
            { task_id: "tk_aaaaaaaaaaaaaaaaaaaa_aaaaaaaa", commit: "c".repeat(40), at: Date.now() - 500, recorded: 12, present: 9 },
          ],
        }
      : {}),
    ...(withReview
      ? {
          review: {
            lines: [{ path, added: 3, removed: 0, agent: 2, others: 1, not_observed: 0 }],
            commits: [{ sha: "abcdef1", subject: "Share the parser", task: "tk_other" }],
            commits_omitted: 1,
            branch: "main",
            line_attribution: { tool: { name: "claude-code", version: "2.1.0" }, files: [] },
          },
        }
      : {}),
  };
}

beforeAll(async () => {
  ensureBuilt();
  server = sharedDevServer();
  const cacheHome = tempDir("waymark-cache-");
  await approveThisDevice();
  repo = Repo.init().write("src/a.ts", "a1\na2\n").write("docs/old.md", "moved\n").commitAll("initial");
  agent = await connectThroughHelper(server, repo.dir, { cacheHome });
  direct = await connect({ url: server.url, token: server.token });
  readToken = String(((await (await api("POST", "/api/tokens", { name: "auditor", scopes: ["read"] })).json()) as { token: string }).token);

  const started = await ok<{ workflow_id: string; share_url: string }>(agent, "start_workflow", {
    name: "Read model",
    description: "Every view, once",
    plan: [{ step: "Fix the parser", goal: "Tests pass" }],
  });
  workflowId = started.workflow_id;
  shareUrl = started.share_url;

  // Through the helper: a parent task with a subtask, a commit, a rename, a file left uncommitted outside its areas.
  const parent = String(
    (await ok(agent, "start_task", { workflow_id: workflowId, name: "Fix the parser", goal: "Tests pass", areas: ["src", "docs"] }))
      .task_id,
  );
  const sub = String(
    (
      await ok(agent, "start_task", {
        workflow_id: workflowId,
        parent_task_id: parent,
        name: "Move the doc",
        goal: "docs/new.md",
        areas: ["docs"],
      })
    ).task_id,
  );
  repo.git("mv", "docs/old.md", "docs/new.md");
  repo.commitAll("Move the doc");
  await complete(agent, { task_id: sub, status: "success", outcome: { summary: "Moved." } });
  repo.write("src/a.ts", "a1\nA2\na3\n").commitAll("Fix the parser");
  repo.write("notes.txt", "left uncommitted\n");
  await ok(agent, "log_decision", {
    task_id: parent,
    category: "trade_off",
    question: "Rewrite or patch?",
    options_considered: ["rewrite", "patch"],
    chosen: "patch",
    reasoning: "Smaller",
    trade_offs: "Keeps the old structure",
  });
  await ok(agent, "log_issue", {
    task_id: parent,
    type: "bug_encountered",
    description: "A flaky test",
    resolution: "Retried",
    requires_human_review: true,
  });
  await ok(agent, "log_milestone", { task_id: parent, message: "Half way", progress: 50, metadata: { step: 1, note: "x" } });
  await complete(agent, {
    task_id: parent,
    status: "partial_success",
    outcome: {
      summary: "Parser fixed; one test flaky",
      achievements: ["Parser"],
      limitations: ["Flaky test"],
      manual_review_needed: true,
      manual_review_reason: "Check the flaky test",
      next_steps: ["Fix the flake"],
    },
    metadata: { tests_status: "passed", commands_executed: ["npm test"], packages_added: ["left-pad"], packages_removed: [] },
    metrics: { input_tokens: 1200, output_tokens: 300, model: "claude-sonnet-4-5", cost_usd: 0.0123 },
  });

  // A client speaking the wire itself: two concurrent tasks change one file (an overlap), with commands, lines and commits.
  const snapshot = { type: "checksum", files: 3, digest: "d".repeat(64) };
  const first = String(
    (await ok(direct, "start_task", { workflow_id: workflowId, name: "Share the parser", goal: "g", snapshot })).task_id,
  );
  const second = String(
    (await ok(direct, "start_task", { workflow_id: workflowId, name: "Share it too", goal: "g", areas: ["lib"], snapshot })).task_id,
  );
  await complete(direct, {
    task_id: first,
    status: "success",
    outcome: { summary: "Shared." },
    changes: wireChanges("lib/shared.ts", BLOB, true),
    metrics: { input_tokens: 10, output_tokens: 5, model: "gpt-5", cost_usd: 0.001, source: "transcript", price_table_date: "2026-01-01" },
  });
  await complete(direct, {
    task_id: second,
    status: "failed",
    outcome: { summary: "Clashed." },
    changes: wireChanges("lib/shared.ts", OTHER_BLOB, false),
  });
  // A task too large for one value: its events and reads name the first files and count the rest (`more`).
  const generate = String(
    (await ok(direct, "start_task", { workflow_id: workflowId, name: "Generate", goal: "g", areas: ["src"], snapshot })).task_id,
  );
  const generated = Array.from({ length: 3000 }, (_, i) => ({
    path: `generated/${"deep/".repeat(12)}file-${String(i).padStart(5, "0")}.ts`,
    before: null,
    after: { mode: "100644", blob: BLOB },
  }));
  await complete(direct, {
    task_id: generate,
    status: "success",
    outcome: { summary: "Generated." },
    changes: { type: "checksum", transitions: generated },
  });
  // Completed without any helper data: its files are not observed.
  const talk = String((await ok(direct, "start_task", { workflow_id: workflowId, name: "Discuss", goal: "g" })).task_id);
  await complete(direct, { task_id: talk, status: "success", outcome: { summary: "Discussed." } });
  // Still open, started without a snapshot the helper could take.
  await ok(direct, "start_task", {
    workflow_id: workflowId,
    name: "Still open",
    goal: "g",
    snapshot: { type: "unavailable", reason: "not a repository" },
  });

  cookie = await signIn();
  await giveFeedback(`task:${parent}`, "approved", "Fine by me.");
  await giveFeedback(`workflow:${workflowId}`, "comment", "Thanks.");
}, 180_000);

afterAll(async () => {
  await agent?.close();
  await direct?.close();
  cleanupTempDirs();
});

describe("the read model as served", () => {
  it("tool results: a completion's files, verification and usage; get_workflow's task, feedback and totals", async () => {
    for (const [index, result] of completions.entries()) {
      parsed(filesChangedSchema, result.files_changed, `complete_task #${index} files_changed`);
      parsed(verificationSchema, result.verification, `complete_task #${index} verification`);
      if (result.metrics !== undefined) parsed(taskMetricsSchema, result.metrics, `complete_task #${index} metrics`);
    }
    const resumed = await ok<{ feedback?: unknown[]; totals: unknown }>(agent, "get_workflow", { workflow_id: workflowId });
    parsed(totalsSchema, resumed.totals, "get_workflow totals");
    expect(resumed.feedback?.length).toBe(2);
    for (const item of resumed.feedback ?? []) parsed(feedbackViewSchema, item, "get_workflow feedback");
    const resource = await direct.readResource({ uri: `waymark://workflows/${workflowId}` });
    const view = parsed(workflowResourceSchema, JSON.parse((resource.contents[0] as { text: string }).text), "workflow resource");
    expect(view.tasks).toHaveLength(7);
    for (const task of view.tasks) {
      const read = await ok<{ task: unknown }>(direct, "get_workflow", { task_id: task.id });
      seenTasks.push(parsed(taskViewSchema, read.task, `get_workflow {task_id: ${task.id}}`));
    }
  });

  it("the workflow resource's pages, the events resource and the share link's live feed", async () => {
    for (const kind of ["tasks", "decisions", "issues", "milestones"] as const) {
      const page = await direct.readResource({ uri: `waymark://workflows/${workflowId}/${kind}` });
      const rows = parsed(recordPageSchema(kind), JSON.parse((page.contents[0] as { text: string }).text), `${kind} page`)[kind];
      expect(rows, kind).toHaveLength(kind === "tasks" ? 7 : 1);
    }
    const read = await direct.readResource({ uri: `waymark://workflows/${workflowId}/events` });
    const page = parsed(eventsPageSchema, JSON.parse((read.contents[0] as { text: string }).text), "events resource");
    const live = await readEvents(shareUrl);
    expect(live.map((event) => event.seq)).toEqual(page.events.map((event) => event.seq));
    for (const event of live) parsed(workflowEventSchema, event, `live event ${event.seq}`);
    const types = new Set(page.events.map((event) => event.type));
    // workflow.completed comes with the last test; every other type is here.
    expect(EVENT_TYPES.filter((type) => !types.has(type))).toEqual(["workflow.completed"]);
  });

  it("/api/workflows and a search on it: what the account index keeps per workflow", async () => {
    const answer = dashboardPageSchema.extend({
      rows: z.array(dashboardRowSchema.extend({ owner_url: z.string() })),
      account_totals: accountTotalsSchema,
    });
    for (const query of ["", "?q=parser", "?path=lib/shared.ts"]) {
      // The account index is pushed to off the reply path: a search finds the workflow once it has caught up.
      const row = await eventually(
        `/api/workflows${query} lists the workflow`,
        async () => {
          const response = await api("GET", `/api/workflows${query}`);
          expect(response.status).toBe(200);
          const { rows } = parsed(answer, await response.json(), `/api/workflows${query}`);
          return rows.find((each) => each.id === workflowId && (query === "" || each.match)) ?? null;
        },
        10_000,
      );
      expect(row.share.status).toBe("active");
    }
  });

  it("the JSON export, for a read token, the share link and the owner: strict, and valid against the published schema", async () => {
    const schema = JSON.parse(readFileSync(join(__dirname, "../../docs/schemas/export-v1.json"), "utf8")) as object;
    const validate = new Ajv2020({ allErrors: true, strict: true, allowUnionTypes: true }).compile(schema);
    const exports = await Promise.all([
      fetch(`${server.url}/api/workflows/${workflowId}/export.json`, { headers: { Authorization: `Bearer ${readToken}` } }),
      fetch(`${shareUrl}/export.json`),
      fetch(`${server.url}/w/${workflowId}/export.json`, { headers: { Cookie: cookie } }),
    ]);
    for (const [index, response] of exports.entries()) {
      expect(response.status).toBe(200);
      const document: unknown = await response.json();
      expect(validate(document), JSON.stringify(validate.errors?.slice(0, 5))).toBe(true);
      const exported = parsed(exportSchema, document, `export #${index}`);
      seenTasks.push(...exported.tasks);
      for (const event of exported.events) if (event.type.startsWith("task.")) seenTasks.push(event.data as TaskView);
      expect(exported.feedback?.map((item) => item.channel)).toEqual(["page", "page"]);
      expect(exported.feedback?.[0]?.author?.via).toBe("session");
      // The approved device's signed payloads, kept whole, and a statement naming whose record it is.
      expect(exported.device_signed?.length).toBeGreaterThan(0);
      expect(exported.statement.payload).toMatchObject({ version: 3, origin: server.url });
    }
  });

  it("the samples reach every optional part of a task", () => {
    const some = (test: (task: TaskView) => unknown) => seenTasks.some((task) => Boolean(test(task)));
    const reached = {
      "open task": some((t) => t.status === "in_progress" && t.completed_at === null),
      subtask: some((t) => t.parent_task_id !== null),
      "outcome with review": some((t) => t.outcome?.manual_review_needed && t.outcome.next_steps),
      metadata: some((t) => t.metadata?.tests_status),
      "files: computed and signed": some((t) => t.files_changed?.source?.kind === "signed" && t.files_changed.source.device),
      "files: claimed": some((t) => t.files_changed?.source?.kind === "claimed"),
      "files: not observed": some((t) => t.files_changed?.source?.kind === "not_observed"),
      "files: renamed": some((t) => t.files_changed?.renamed.length),
      "files: uncommitted": some((t) => t.files_changed?.uncommitted.length),
      "files: line counts": some((t) => t.files_changed?.lines?.length && t.files_changed.line_totals),
      "files: line authors and tool": some((t) => t.files_changed?.line_authors?.tool),
      "files: commits": some((t) => t.files_changed?.commits?.length && t.files_changed.commits_omitted),
      "files: branch": some((t) => t.files_changed?.branch),
      "files: not by agent tools": some((t) => t.files_changed?.not_by_agent_tools),
      "verification: outside the areas": some((t) => t.verification?.unexpected_files.length),
      "verification: overlaps": some((t) => t.verification?.overlapping?.length),
      "files and verification: more than one value lists": some((t) => t.files_changed?.more && t.verification?.more?.unexpected_files),
      "files: a large task listed whole (the export)": some((t) => (t.files_changed?.added.length ?? 0) === 3000),
      "usage: claimed": some((t) => t.metrics?.source === "agent" && t.metrics.model),
      "repository with commits": some((t) => t.repository?.start_commit && t.repository.end_commit),
      commands: some((t) => t.commands?.runs.length && t.commands.omitted),
      "durability of earlier tasks' lines": some((t) => t.durability?.length),
    };
    expect(Object.entries(reached).filter(([, seen]) => !seen)).toEqual([]);
  });

  it("a field a view does not declare fails its schema (drift is a test failure)", () => {
    const task = seenTasks[0] as TaskView;
    const drifted = taskViewSchema.safeParse({ ...task, reviewer: "someone" });
    expect(drifted.success).toBe(false);
    expect(z.prettifyError((drifted as { error: z.ZodError }).error)).toContain("reviewer");
    expect(taskViewSchema.safeParse({ ...task, status: "done" }).success).toBe(false);
  });

  it("a completed workflow: its header, totals and the last event type", async () => {
    const open = seenTasks.find((task) => task.status === "in_progress") as TaskView;
    await ok(direct, "complete_task", { task_id: open.id, status: "success", outcome: { summary: "Done." } });
    const done = await ok<{ totals: unknown }>(agent, "complete_workflow", {
      workflow_id: workflowId,
      status: "success",
      summary: "All read back",
      achievements: ["Every view"],
      limitations: [],
    });
    parsed(totalsSchema, done.totals, "complete_workflow totals");
    const response = await fetch(`${shareUrl}/export.json`);
    const exported = parsed(exportSchema, await response.json(), "export of the completed workflow");
    expect(exported.workflow.outcome?.summary).toBe("All read back");
    expect(new Set(exported.events.map((event) => event.type))).toEqual(new Set(EVENT_TYPES));
  });
});
