/**
 * `waymark verify` as a reviewer and an attacker use it: a real `wrangler dev`, an agent working
 * through the real helper in a real git repository, the export downloaded with a read-only token,
 * then checked with the real CLI: a genuine export passes (keys from the endpoint, from a file, or
 * none, said so), and every forgery an attacker would try is refused with what gives it away.
 * `--repo` re-derives the committed changes from a clone. The exports validate against the
 * published JSON Schema (ajv, 2020-12).
 */

import { execFileSync, spawnSync } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { reviewCounts } from "@waymark/protocol/review-counts";
import { accountDigest, type SignedStatement } from "@waymark/protocol/statement";
import Ajv2020 from "ajv/dist/2020.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { cleanupTempDirs, Repo, tempDir } from "../../client-helper/test/fixtures";
import { BIN, ensureBuilt, SYSTEM_NODE } from "../../client-helper/test/support";
import { connectThroughHelper } from "../support/agents";
import type { DevServer } from "../support/dev-server";
import { rechain, resign } from "../support/export-forgery";
import { ok, type Structured } from "../support/mcp-client";
import { sharedDevServer } from "../support/shared-server";

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
type Doc = { [key: string]: Json } & {
  tasks: Record<string, Json>[];
  issues: Record<string, Json>[];
  events: { seq: number; at: string; type: string; task_id: string | null; data: Record<string, Json>; hash: string }[];
  chain: { algorithm: string; genesis: string; head: string; events: number };
  statement: SignedStatement;
};

let server: DevServer & { account: string };
let cacheHome: string;
let readToken: string;
let exportsDir: string;

beforeAll(async () => {
  ensureBuilt();
  cacheHome = tempDir("waymark-cache-");
  exportsDir = tempDir("waymark-exports-");
  server = sharedDevServer();
  readToken = String((await api("POST", "/api/tokens", { name: "auditor", scopes: ["read"] }, server.token)).token);
});
afterAll(async () => {
  cleanupTempDirs();
});

async function api(method: string, path: string, body: unknown, token: string): Promise<Record<string, Json>> {
  const response = await fetch(`${server.url}${path}`, {
    method,
    headers: { Authorization: `Bearer ${token}`, "Content-Type": "application/json" },
    body: JSON.stringify(body),
  });
  expect(response.status, await response.clone().text()).toBeLessThan(300);
  return (await response.json()) as Record<string, Json>;
}

function waymark(args: string[]) {
  const run = spawnSync(SYSTEM_NODE, [BIN, ...args], {
    encoding: "utf8",
    env: { ...(process.env as Record<string, string>), XDG_CACHE_HOME: cacheHome },
  });
  return { code: run.status, stdout: run.stdout, stderr: run.stderr };
}

let files = 0;
function save(value: unknown): string {
  const file = join(exportsDir, `export-${++files}.json`);
  writeFileSync(file, typeof value === "string" ? value : JSON.stringify(value, null, 2));
  return file;
}

/** The JSON export as an auditor's script reads it: GET with a read-only token. */
async function download(workflowId: string, base = server.url, token = readToken): Promise<{ text: string; doc: Doc }> {
  const response = await fetch(`${base}/api/workflows/${workflowId}/export.json`, { headers: { Authorization: `Bearer ${token}` } });
  expect(response.status).toBe(200);
  const text = await response.text();
  return { text, doc: JSON.parse(text) as Doc };
}

interface Recorded {
  repo: Repo;
  workflowId: string;
  failed: string;
  passed: string;
  issueId: string;
  failedEnd: string;
}

/**
 * An agent's workflow through the helper: a task that commits a change and a rename, leaves a
 * file uncommitted, logs an issue for review and fails; a second that commits a new file.
 */
async function record(name: string): Promise<Recorded> {
  const repo = Repo.init().write("src/a.ts", "a1\na2\na3\n").write("docs/old.md", "moved\n").commitAll("initial");
  const agent = await connectThroughHelper(server, repo.dir, { cacheHome });
  const tool = (tool: string, args: Structured) => ok(agent, tool, args);
  const { workflow_id } = (await tool("start_workflow", { name })) as { workflow_id: string };
  const failed = String(
    (await tool("start_task", { workflow_id, name: "Fix the parser", goal: "Tests pass", areas: ["src", "docs"] })).task_id,
  );
  repo.write("src/a.ts", "a1\nA2\na3\na4\n");
  repo.git("mv", "docs/old.md", "docs/new.md");
  repo.commitAll("Fix the parser");
  repo.write("notes.txt", "left uncommitted\n");
  const issue = await tool("log_issue", {
    task_id: failed,
    type: "bug_encountered",
    description: "A test still fails",
    resolution: "None yet",
    requires_human_review: true,
  });
  await tool("complete_task", { task_id: failed, status: "failed", outcome: { summary: "Two tests still fail" } });
  const failedEnd = repo.git("rev-parse", "HEAD").trim();
  const passed = String((await tool("start_task", { workflow_id, name: "Add b", goal: "b exists", areas: ["src"] })).task_id);
  await tool("log_decision", { task_id: passed, category: "other", question: "Where?", chosen: "src", reasoning: "Beside a" });
  await tool("log_milestone", { task_id: passed, message: "Writing b", progress: 50 });
  repo.write("src/b.ts", "b1\nb2\n").commitAll("Add b");
  await tool("complete_task", {
    task_id: passed,
    status: "success",
    outcome: { summary: "b added" },
    metrics: { input_tokens: 1200, output_tokens: 300, cost_usd: 0.0123 },
  });
  await tool("complete_workflow", { workflow_id, status: "partial_success", summary: "One of two" });
  await agent.close();
  return { repo, workflowId: workflow_id, failed, passed, issueId: String(issue.id), failedEnd };
}

const taskOf = (doc: Doc, id: string) => doc.tasks.find((task) => task.id === id) as Record<string, Json>;

describe("waymark verify against a real deployment", () => {
  let recorded: Recorded;
  let genuine: { text: string; doc: Doc };

  beforeAll(async () => {
    recorded = await record("Verify me");
    genuine = await download(recorded.workflowId);
  }, 120_000);

  it("passes a genuine export, and says what the pass means: keys from the endpoint, from a file, or none", async () => {
    const file = save(genuine.text);
    const events = genuine.doc.events.length;
    const online = waymark(["verify", file, "--endpoint", server.url]);
    expect(online.code, online.stderr).toBe(0);
    expect(online.stdout).toContain(
      `Export of workflow ${recorded.workflowId} "Verify me": ${events} events, chain head ${genuine.doc.events.at(-1)?.hash}`,
    );
    expect(online.stdout).toMatch(
      /signature: ok: signed \S+ with key \S{43}, the current key of http:\/\/127\.0\.0\.1:\d+\/\.well-known\/waymark-signing-keys\.json/,
    );
    expect(online.stdout).toContain(
      "content:   ok: the workflow, 2 tasks, 1 decision, 1 issue, 1 milestone, the totals and 0 feedback items follow from the events",
    );
    expect(online.stdout).toContain(
      [
        "  devices: no figure is labelled computed and signed",
        "    files: claimed by the client ×2",
        "    usage: claimed by the client ×1",
      ].join("\n"),
    );
    expect(online.stdout).toContain(`record of: account ${accountDigest(server.account)}, issued by ${server.url}`);
    expect(online.stdout).toContain(
      `ok: this deployment recorded these ${events} events for ${accountDigest(server.account)}, and every other field of the export follows from them.`,
    );
    expect(online.stdout).toContain("This does not prove that the agent told the truth");

    const keys = save(await (await fetch(`${server.url}/.well-known/waymark-signing-keys.json`)).text());
    const offline = waymark(["verify", file, "--key", keys]);
    expect(offline.code, offline.stderr).toBe(0);
    expect(offline.stdout).toContain(`the current key of ${keys}`);

    // Fail closed: a signature that was not checked is no pass, unless the caller says it accepts that.
    const unkeyed = waymark(["verify", file]);
    expect(unkeyed.code).toBe(1);
    expect(unkeyed.stderr).toContain("signature: NOT CHECKED: no keys given (pass --endpoint <url> or --key <file>)");
    expect(unkeyed.stderr).toContain("NOT OK: not everything could be checked, and a check that did not run is not a pass");
    const allowed = waymark(["verify", file, "--allow-unsigned"]);
    expect(allowed.code, allowed.stderr).toBe(0);
    expect(allowed.stdout).toContain("NOT CHECKED (accepted with --allow-unsigned)");
    expect(allowed.stdout).toContain("anyone can write a consistent one");
    expect(allowed.stdout).not.toMatch(/^ok:/m);

    const json = waymark(["verify", file, "--endpoint", server.url, "--json"]);
    expect(json.code).toBe(0);
    expect(JSON.parse(json.stdout)).toMatchObject({
      ok: true,
      export: { problems: [], signature: { status: "ok", key_status: "current" } },
    });
  });

  it("validates against the JSON Schema every endpoint publishes, which refuses an invalid document", async () => {
    const response = await fetch(`${server.url}/schemas/export-v1.json`);
    expect(response.status).toBe(200);
    expect(response.headers.get("Content-Type")).toContain("application/schema+json");
    const schema = (await response.json()) as object;
    expect(schema).toEqual(JSON.parse(readFileSync(join(__dirname, "../../docs/schemas/export-v1.json"), "utf8")));
    const validate = new Ajv2020({ allErrors: true, strict: true, allowUnionTypes: true }).compile(schema);
    expect(validate(genuine.doc), JSON.stringify(validate.errors, null, 2)).toBe(true);
    expect(genuine.doc.$schema).toBe(`${server.url}/schemas/export-v1.json`);
    // Invalid documents are refused: the schema is not a formality.
    const broken = structuredClone(genuine.doc);
    (taskOf(broken, recorded.failed) as { status: Json }).status = "done";
    expect(validate(broken)).toBe(false);
    expect(validate.errors?.some((error) => error.instancePath === "/tasks/0/status")).toBe(true);
  });

  const forgeries: [string, (doc: Doc) => Promise<void> | void, string[]][] = [
    [
      "a task's status and outcome rewritten",
      (doc) => {
        const task = taskOf(doc, recorded.failed);
        task.status = "success";
        (task.outcome as Record<string, Json>).summary = "All green";
      },
      [
        "tasks: not what the deployment signed (changed after signing)",
        `tasks[${"FAILED"}].status: export says "success", its events say "failed"`,
        `tasks[${"FAILED"}].outcome.summary: export says "All green", its events say "Two tests still fail"`,
      ],
    ],
    [
      "the issue that asks for review removed, and the totals made to match",
      (doc) => {
        doc.issues = [];
        (doc.totals as Record<string, Json>).issues = 0;
        (doc.totals as Record<string, Json>).reviews_needed = 0;
      },
      [
        `issues: ${"ISSUE"} is in the events but missing from the export`,
        "totals.issues: export says 0, its events say 1",
        "issues: not what the deployment signed",
      ],
    ],
    [
      "the events edited to match and the chain recomputed",
      (doc) => {
        for (const event of doc.events)
          if (event.data.id === recorded.failed && event.type === "task.completed") event.data.status = "success";
        taskOf(doc, recorded.failed).status = "success";
        rechain(doc);
      },
      ["events were altered and the chain recomputed", "events: not what the deployment signed", "chain: not what the deployment signed"],
    ],
    [
      "the last events cut off, the chain pointed at the new end",
      (doc) => {
        doc.events.splice(-2);
        const last = doc.events.at(-1);
        doc.chain = { ...doc.chain, events: last?.seq ?? 0, head: last?.hash ?? "" };
        doc.last_seq = last?.seq ?? 0;
      },
      ["statement: it was signed for EVENTS events, the export carries CUT: events were removed"],
    ],
    [
      "the last events cut off, nothing else changed",
      (doc) => {
        doc.events.splice(-2);
      },
      ["chain: the export was read at event EVENTS, but carries only CUT events: events were removed from its end"],
    ],
    [
      "the signed statement of another workflow's export",
      async (doc) => {
        const other = await record("Another workflow");
        doc.statement = (await download(other.workflowId)).doc.statement;
      },
      ["statement: it was signed for workflow", `not for this export's "${"WORKFLOW"}": it comes from another export`],
    ],
    [
      "an edited export signed with the attacker's own key",
      (doc) => {
        taskOf(doc, recorded.failed).status = "success";
        for (const event of doc.events)
          if (event.data.id === recorded.failed && event.type === "task.completed") event.data.status = "success";
        rechain(doc);
        resign(doc);
      },
      ["signature: statement.kid: key", "is not among the 1 key(s) given"],
    ],
    [
      "an edited export signed with another key under this deployment's key id",
      (doc) => {
        const kid = doc.statement.kid;
        taskOf(doc, recorded.failed).status = "success";
        for (const event of doc.events)
          if (event.data.id === recorded.failed && event.type === "task.completed") event.data.status = "success";
        rechain(doc);
        resign(doc, kid);
      },
      ["signature: statement.signature: does not match the statement under key"],
    ],
    [
      "the statement removed",
      (doc) => {
        const { statement: _statement, ...rest } = doc;
        for (const key of Object.keys(doc)) delete doc[key];
        Object.assign(doc, rest);
      },
      ["statement: missing: the export is not signed, so nothing shows this deployment wrote it"],
    ],
  ];

  it.each(forgeries)(
    "refuses %s, naming what gives it away",
    async (_what, forge, expected) => {
      const doc = structuredClone(genuine.doc);
      await forge(doc);
      const run = waymark(["verify", save(doc), "--endpoint", server.url]);
      expect(run.code, run.stdout).toBe(1);
      expect(run.stdout).toBe("");
      const events = String(genuine.doc.events.length);
      for (const line of expected) {
        const wanted = line
          .replaceAll("FAILED", recorded.failed)
          .replaceAll("ISSUE", recorded.issueId)
          .replaceAll("WORKFLOW", recorded.workflowId)
          .replaceAll("EVENTS", events)
          .replaceAll("CUT", String(genuine.doc.events.length - 2));
        expect(run.stderr).toContain(wanted);
      }
      expect(run.stderr).toContain("NOT OK: this file is not the record the deployment wrote, or does not follow from it");
    },
    120_000,
  );

  it("without keys, still catches edits the statement covers, and says an attacker's own signature was not checked", () => {
    const edited = structuredClone(genuine.doc);
    taskOf(edited, recorded.failed).status = "success";
    const caught = waymark(["verify", save(edited)]);
    expect(caught.code).toBe(1);
    expect(caught.stderr).toContain("tasks: not what the deployment signed");

    const resigned = structuredClone(genuine.doc);
    taskOf(resigned, recorded.failed).status = "success";
    for (const event of resigned.events)
      if (event.data.id === recorded.failed && event.type === "task.completed") event.data.status = "success";
    // A consistent forgery also counts its review items again: a failed task no longer is one.
    const forgedCounts = reviewCounts(resigned as unknown as Parameters<typeof reviewCounts>[0], []);
    resigned.review = forgedCounts as unknown as Json;
    (resigned.totals as Record<string, Json>).reviews_needed = forgedCounts.review.open;
    rechain(resigned);
    resign(resigned);
    const unkeyed = waymark(["verify", save(resigned)]);
    expect(unkeyed.code).toBe(1);
    expect(unkeyed.stderr).toContain("signature: NOT CHECKED");
    const accepted = waymark(["verify", save(resigned), "--allow-unsigned"]);
    expect(accepted.code).toBe(0);
    expect(accepted.stdout).toContain("anyone can write a consistent one");
  });

  it("refuses a file whose meaning depends on the JSON parser: a forged first copy of a member, a number written otherwise", () => {
    // Most parsers keep the last "tasks" (the genuine one); some keep the first (the forger's).
    const twice = genuine.text.replace(/^\{\n/, '{\n  "tasks": [{"id": "tk_forged", "status": "success"}],\n');
    const refused = waymark(["verify", save(twice), "--endpoint", server.url]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/refused, line \d+, column \d+: the member "tasks" appears twice in one object/);
    expect(refused.stderr).toContain("Nothing in it was checked.");
    expect(refused.stdout).toBe("");
    // 1.0 is 1 to JavaScript and a float to Python: the digest cannot tell, the reader can.
    const float = genuine.text.replace(/"last_seq": (\d+)/, '"last_seq": $1.0');
    expect(float).not.toBe(genuine.text);
    const number = waymark(["verify", save(float), "--endpoint", server.url]);
    expect(number.code).toBe(1);
    expect(number.stderr).toMatch(/the number \d+\.0 is not written as JavaScript writes its value/);
    // Half a surrogate pair, escaped, in a string: some parsers replace it, some refuse the file.
    const lone = genuine.text.replace('"Verify me"', '"Verify me\\ud800"');
    const surrogate = waymark(["verify", save(lone), "--endpoint", server.url]);
    expect(surrogate.code).toBe(1);
    expect(surrogate.stderr).toContain("an escaped half of a UTF-16 surrogate pair");
  });

  it("answers 2 for what is not a check: no file, not JSON, not an export, keys it cannot read", () => {
    const file = save(genuine.text);
    expect(waymark(["verify"]).code).toBe(2);
    expect(waymark(["verify", save("{")])).toMatchObject({ code: 2, stderr: expect.stringContaining("is not JSON") });
    expect(waymark(["verify", save({ hello: 1 })])).toMatchObject({
      code: 2,
      stderr: expect.stringContaining("not a Waymark JSON export"),
    });
    expect(waymark(["verify", file, "--endpoint", server.url, "--key", file])).toMatchObject({
      code: 2,
      stderr: expect.stringContaining("not both"),
    });
    expect(waymark(["verify", file, "--key", save({ keys: "none" })])).toMatchObject({
      code: 2,
      stderr: expect.stringContaining("keys: must be"),
    });
    expect(waymark(["verify", file, "--endpoint", `${server.url}/nothing-here/`]).code).toBe(0);
    expect(waymark(["verify", file, "--endpoint", "http://127.0.0.1:9"])).toMatchObject({
      code: 2,
      stderr: expect.stringContaining("cannot read the signing keys"),
    });
    expect(waymark(["verify", file, "--repo", exportsDir])).toMatchObject({
      code: 2,
      stderr: expect.stringContaining("not a git repository"),
    });
  });

  it("--repo re-derives each task's committed changes from a clone: a genuine export agrees, a rewritten file list does not", () => {
    const file = save(genuine.text);
    const clone = tempDir("waymark-clone-");
    execFileSync("git", ["clone", "-q", recorded.repo.dir, clone]);
    const agrees = waymark(["verify", file, "--endpoint", server.url, "--repo", clone]);
    expect(agrees.code, agrees.stderr).toBe(0);
    expect(agrees.stdout).toContain(`${recorded.failed} "Fix the parser": agrees (3 committed files, 1 rename, 3 line counts, 1 commit)`);
    // The second task started with the first one's notes.txt untracked and committed it: not its own
    // change, and the record names notes.txt as dirty at the task's start, so git's difference is explained.
    expect(agrees.stdout).toContain(
      [
        `  ${recorded.passed} "Add b": agrees (1 committed file, 0 renames, 1 line count, 1 commit)`,
        `    on the branch: its commits ${recorded.failedEnd.slice(0, 12)}..`,
      ].join("\n"),
    );
    expect(agrees.stdout).toContain(
      [
        "    explained by the uncommitted changes the record names at the task's start:",
        "      notes.txt: git shows it added between",
      ].join("\n"),
    );
    expect(agrees.stdout).not.toContain("undecided");
    expect(agrees.stdout).toContain("1 file left uncommitted at the end of their task: out of git's reach, not checked");

    // The first task started clean: its committed file list is git's to decide.
    const rewritten = structuredClone(genuine.doc);
    const files = taskOf(rewritten, recorded.failed).files_changed as Record<string, Json[]>;
    files.modified = ["src/innocent.ts"];
    files.lines = (files.lines ?? []).map((line) =>
      (line as { path: string }).path === "src/a.ts" ? { ...(line as object), path: "src/innocent.ts" } : line,
    );
    const caught = waymark(["verify", save(rewritten), "--repo", clone]);
    expect(caught.code).toBe(1);
    expect(caught.stderr).toContain(`${recorded.failed} "Fix the parser": DIFFERS from git:`);
    expect(caught.stderr).toContain("src/a.ts: git shows it modified between");
    expect(caught.stderr).toContain("src/innocent.ts: the record lists it as committed (modified), git shows no change to it between");
  });

  it("--repo fails on a commit gone from rewritten history, and says it is missing, not a mismatch", () => {
    const clone = tempDir("waymark-clone-");
    execFileSync("git", ["clone", "-q", "--no-local", recorded.repo.dir, clone]);
    // History rewritten after the workflow: the second task's commit is gone.
    execFileSync("git", ["reset", "-q", "--hard", recorded.failedEnd], { cwd: clone });
    execFileSync("git", ["commit", "-q", "--allow-empty", "-m", "Rewritten"], {
      cwd: clone,
      env: {
        ...process.env,
        GIT_AUTHOR_NAME: "T",
        GIT_AUTHOR_EMAIL: "t@example.com",
        GIT_COMMITTER_NAME: "T",
        GIT_COMMITTER_EMAIL: "t@example.com",
      },
    });
    execFileSync("git", ["update-ref", "-d", "ORIG_HEAD"], { cwd: clone });
    execFileSync("git", ["reflog", "expire", "--expire=now", "--all"], { cwd: clone });
    execFileSync("git", ["remote", "remove", "origin"], { cwd: clone });
    execFileSync("git", ["gc", "-q", "--prune=now"], { cwd: clone });
    const run = waymark(["verify", save(genuine.text), "--endpoint", server.url, "--repo", clone]);
    expect(run.code, run.stdout).toBe(1);
    expect(run.stderr).toContain(`${recorded.failed} "Fix the parser": agrees`);
    expect(run.stderr).toMatch(
      new RegExp(
        `${recorded.passed} "Add b": FAILED: missing: commit [0-9a-f]{12} is not in this repository and no commit on HEAD holds the task's record`,
      ),
    );
    expect(run.stderr).toContain("NOT OK: the export is intact, but git does not agree with the record, or could not decide a task");
  });
});
