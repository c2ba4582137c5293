/**
 * @module test/support/evidence-scenario
 * The evidence scenario both real agents play (docs/evidence.md): in one task the agent writes a
 * new file and edits an existing one, a "person" edits another line of that file between two model
 * turns, the agent runs a failing then a passing `npm test` (a fake AWS secret in the failing
 * command line, a fake GitHub token in a decision) and completes the task claiming success. Then
 * the record is read back through the real endpoint: the share page, the Markdown summary, the JSON
 * export and the Agent Trace export (share link and read token) must give the agent's and the
 * person's lines (as `git blame` of the end commit has them), the test runs in order, and no secret.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { Ajv2020 } from "ajv/dist/2020.js";
import addFormats from "ajv-formats";
import { expect } from "vitest";
import type { AgentHarness, ToolName } from "./agent-harness.ts";
import type { AgentProject } from "./agent-project.ts";
import { getFrom } from "./loopback-get.ts";
import { ok } from "./mcp-client.ts";
import type { Conversation, Turn, Usage } from "./model-server.ts";
import { visibleText } from "./page-text.ts";
import { newReaderAddress } from "./reader-proxy.ts";

/** AWS's own documentation example key, and a GitHub token shaped like a real one: neither may reach the endpoint. */
export const AWS_SECRET = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY";
export const GITHUB_TOKEN = "ghp_R8kq2ZtVw3Xy7Lm9Np4Bc6Df1Gh5Jk0Qs2Tu";

export const EVIDENCE = {
  files: {
    "package.json": '{ "name": "sums", "private": true, "scripts": { "test": "node test.js" } }\n',
    "test.js":
      'const { total } = require("./src/sum.js");\nif (total([1, 2, 3]) !== 6) {\n  console.error("total([1, 2, 3]) is not 6");\n  process.exit(1);\n}\nconsole.log("ok");\n',
    "src/sum.js": "// Sums numbers.\nfunction total(values) {\n  return 0;\n}\n\nmodule.exports = { total };\n",
  },
  /** The new file the agent writes. */
  mean: 'const { total } = require("./sum.js");\nconst mean = (values) => total(values) / values.length;\nmodule.exports = { mean };\n',
  /** The agent's fix (line 3 of src/sum.js). */
  brokenLine: "  return 0;",
  fixedLine: "  return values.reduce((sum, value) => sum + value, 0);",
  /** The person's edit (line 1 of src/sum.js), made while the agent waits for the model. */
  personBefore: "// Sums numbers.",
  personAfter: "// Sums a list of numbers.",
  sumEnd:
    "// Sums a list of numbers.\nfunction total(values) {\n  return values.reduce((sum, value) => sum + value, 0);\n}\n\nmodule.exports = { total };\n",
  task: "Make total() sum its values",
  failingCommand: `AWS_SECRET_ACCESS_KEY=${AWS_SECRET} npm test`,
  passingCommand: "npm test",
  commitCommand: "git add -A && git commit -q -m 'Sum the values'",
  commit: "Sum the values",
} as const;

/** A patch in Codex's apply_patch format. */
const patch = (...lines: string[]) => ["*** Begin Patch", ...lines, "*** End Patch", ""].join("\n");

/** The agent's two edits as Codex's apply_patch makes them: the new file, then the fix. */
export const CODEX_PATCHES = {
  mean: patch(
    "*** Add File: src/mean.js",
    ...EVIDENCE.mean
      .trimEnd()
      .split("\n")
      .map((line) => `+${line}`),
  ),
  fix: patch("*** Update File: src/sum.js", "@@", " function total(values) {", `-${EVIDENCE.brokenLine}`, `+${EVIDENCE.fixedLine}`),
} as const;

/** The task's added lines per file, as the record counts them: the agent's, and the person's one line. */
export const EVIDENCE_LINES = [
  { path: "src/mean.js", added: 3, removed: 0, agent: 3, others: 0, not_observed: 0 },
  { path: "src/sum.js", added: 2, removed: 2, agent: 1, others: 1, not_observed: 0 },
];

/**
 * The owner approves the device key `waymark init` made for the project's user (the admin API the
 * Devices page stands beside: `POST /api/devices {name, key}`), so what the helper computes reads
 * "computed and signed".
 */
export async function approveDevice(harness: AgentHarness): Promise<void> {
  const project = harness.project as AgentProject;
  const file = JSON.parse(readFileSync(join(project.home, ".config", "waymark", "device-key.json"), "utf8")) as { key: { x: string } };
  const response = await fetch(`${harness.server.url}/api/devices`, {
    method: "POST",
    headers: { Authorization: `Bearer ${harness.server.token}`, "Content-Type": "application/json" },
    body: JSON.stringify({ name: "agent machine", key: file.key.x }),
  });
  expect(response.status, await response.clone().text()).toBe(201);
}

/** The person's edit of another line of the file the agent just edited. */
export function personEdits(repo: string): void {
  const path = join(repo, "src", "sum.js");
  const content = readFileSync(path, "utf8");
  expect(content).toContain(EVIDENCE.fixedLine);
  writeFileSync(path, content.replace(EVIDENCE.personBefore, EVIDENCE.personAfter));
}

/** start_workflow and start_task of the scenario. */
export function evidenceStartTurns(tools: ToolName, usage: (n: number) => Usage): Turn[] {
  return [
    {
      calls: [
        {
          name: tools.name("start_workflow"),
          namespace: tools.namespace,
          input: { name: "Sums", description: "Evidence: lines and checks" },
        },
      ],
      usage: usage(1),
    },
    {
      calls: [
        {
          name: tools.name("start_task"),
          namespace: tools.namespace,
          input: (conversation) => ({
            workflow_id: conversation.field(tools.name("start_workflow"), "workflow_id"),
            name: EVIDENCE.task,
            goal: "total() returns the sum; a mean() beside it",
            areas: ["src/**"],
          }),
        },
      ],
      usage: usage(2),
    },
  ];
}

/** log_decision with a token in its reasoning, then complete_task claiming the tests passed, then a last word. */
export function evidenceEndTurns(tools: ToolName, usage: (n: number) => Usage, from: number): Turn[] {
  const taskId = (conversation: Conversation) => conversation.field(tools.name("start_task"), "task_id");
  return [
    {
      calls: [
        {
          name: tools.name("log_decision"),
          namespace: tools.namespace,
          input: (conversation) => ({
            task_id: taskId(conversation),
            category: "other",
            question: "Where does the CI token live?",
            chosen: "In the CI secret store",
            reasoning: `The token GITHUB_TOKEN=${GITHUB_TOKEN} was pasted in the issue; it belongs in the secret store.`,
          }),
        },
      ],
      usage: usage(from),
    },
    {
      calls: [
        {
          name: tools.name("complete_task"),
          namespace: tools.namespace,
          input: (conversation) => ({
            task_id: taskId(conversation),
            status: "success",
            outcome: { summary: "total() sums its values; added mean(). All tests pass." },
            metadata: { tests_status: "passed", commands_executed: ["npm test"] },
          }),
        },
      ],
      usage: usage(from + 1),
      latencyMs: 600,
    },
    { text: "Recorded.", usage: usage(from + 2) },
  ];
}

type Range = { start_line: number; end_line: number; contributor?: { type: string } };
type TraceRecord = {
  vcs: { type: string; revision: string };
  tool?: { name: string; version?: string };
  files: { path: string; conversations: { contributor: { type: string; model_id?: string }; ranges: Range[] }[] }[];
};

function rangesOf(record: TraceRecord): Record<string, string[]> {
  return Object.fromEntries(
    record.files.map((file) => [
      file.path,
      file.conversations.flatMap((c) => c.ranges.map((r) => `${r.start_line}-${r.end_line} ${(r.contributor ?? c.contributor).type}`)),
    ]),
  );
}

/** Anonymous reads come from a loopback address of the file's own: the server budgets reads per client (./reader-proxy.ts). */
let reader: string | null = null;

async function fetchText(url: string, headers: Record<string, string> = {}): Promise<string> {
  if (Object.keys(headers).length === 0) {
    reader ??= newReaderAddress();
    const got = await getFrom(url, reader);
    expect(got.status, url).toBe(200);
    return got.body;
  }
  const response = await fetch(url, { headers });
  expect(response.status, url).toBe(200);
  return response.text();
}

const validRecord = (() => {
  const schema = JSON.parse(readFileSync(join(import.meta.dirname, "../../docs/schemas/agent-trace-record.json"), "utf8"));
  const ajv = new Ajv2020({ allErrors: true, strict: true });
  addFormats.default(ajv);
  return ajv.compile(schema);
})();

/**
 * The record of the scenario's task, read through the endpoint: on disk and in git first, then the
 * task (get_workflow), the share page, the Markdown summary, the JSON export and the Agent Trace
 * export (share link and read token), none of them holding a secret.
 */
export async function expectEvidence(
  harness: AgentHarness,
  ids: { workflowId: string; taskId: string },
  agent: { tool: string; modelId: string },
): Promise<void> {
  const project = harness.project as AgentProject;
  expect(readFileSync(join(project.repo, "src", "mean.js"), "utf8")).toBe(EVIDENCE.mean);
  expect(readFileSync(join(project.repo, "src", "sum.js"), "utf8")).toBe(EVIDENCE.sumEnd);
  expect(project.git("log", "--format=%s").trim().split("\n")).toEqual([EVIDENCE.commit, "initial"]);
  expect(project.git("status", "--porcelain")).toBe("");
  const head = project.git("rev-parse", "HEAD").trim();

  const structured = await ok(harness.reader, "get_workflow", { task_id: ids.taskId });
  const task = structured.task as Record<string, unknown>;
  expect(task.status).toBe("success");
  const files = task.files_changed as { added: string[]; modified: string[]; lines: Record<string, unknown>[] };
  expect(files).toMatchObject({
    added: ["src/mean.js"],
    modified: ["src/sum.js"],
    source: { kind: "signed", device: { name: "agent machine" } },
  });
  expect(files.lines).toEqual(EVIDENCE_LINES);
  // What the hooks observed: the failing run (its secret redacted), the passing run after the last edit, the commit.
  const commands = task.commands as {
    runs: { command: string; exit_code: number | null; kinds: string[]; at: string }[];
    last_edit_at: string;
  };
  expect(commands.runs.map((run) => [run.command, run.exit_code, run.kinds])).toEqual([
    ["AWS_SECRET_ACCESS_KEY=[redacted: AWS secret access key] npm test", 1, ["test"]],
    [EVIDENCE.passingCommand, 0, ["test"]],
    [EVIDENCE.commitCommand, 0, []],
  ]);
  const [failing, passing] = commands.runs;
  expect(Date.parse(String(failing?.at))).toBeLessThan(Date.parse(commands.last_edit_at));
  expect(Date.parse(String(passing?.at))).toBeGreaterThan(Date.parse(commands.last_edit_at));

  // The share link the agent got from start_workflow (the owner's page needs a sign-in).
  const shareUrl = harness.model.requestText(harness.model.mainRequests().length - 1).match(/https?:\/\/[^"\\\s]+\/s\/[A-Za-z0-9_-]+/)?.[0];
  expect(shareUrl, "start_workflow gave the agent a share link").toBeDefined();
  const page = await fetchText(String(shareUrl));
  expect(page).toContain('<span class="who">agent 1 · others 1<span class="sr-only"> added lines</span></span>');
  expect(page).toContain('<span class="who">agent 3<span class="sr-only"> added lines</span></span>');
  // The approved device signed the helper's figures (docs/provenance.md).
  expect(visibleText(page)).toContain("Files: computed and signed");
  expect(page).toContain("4 of 5 added lines last written by the agent&#39;s own edit tools (80%)");
  const shown = visibleText(page);
  expect(shown).toMatch(
    /Tests: claimed: tests passed \(ran npm test\) · observed: npm test ✓ exit 0 \(passed\) at [^·]* after the last edit/,
  );
  // Both test runs, in order, the failing one in words.
  const failed = shown.indexOf("AWS_SECRET_ACCESS_KEY=[redacted: AWS secret access key] npm test ✕ exit 1 (failed)");
  expect(failed).toBeGreaterThanOrEqual(0);
  expect(failed).toBeLessThan(shown.indexOf("npm test ✓ exit 0 (passed) · "));
  expect(page).toContain('<span class="exit exit-fail"><span aria-hidden="true">✕</span> exit 1 (failed)</span>');

  const markdown = await fetchText(`${shareUrl}/export.md`);
  expect(markdown).toContain("Lines: +5 −2 (agent 4 · others 1)");
  expect(markdown).toContain("| M | `src/sum.js` | 2 | 2 | committed, agent 1 · others 1 |");
  expect(markdown).toContain("| A | `src/mean.js` | 3 | 0 | committed, agent 3 |");
  expect(markdown).toMatch(
    /Checks:\n- Tests: claimed: tests passed \(ran `npm test`\) · observed: `npm test` ✓ exit 0 \(passed\) at \d\d:\d\d UTC after the last edit/,
  );
  const json = await fetchText(`${shareUrl}/export.json`);

  const shared = await fetchText(`${shareUrl}/export.agent-trace.json`);
  const byToken = await fetchText(`${harness.server.url}/api/workflows/${ids.workflowId}/export.agent-trace.json`, {
    Authorization: `Bearer ${harness.server.token}`,
  });
  for (const text of [shared, byToken]) {
    const records = JSON.parse(text) as TraceRecord[];
    expect(records).toHaveLength(1);
    const record = records[0] as TraceRecord;
    expect(validRecord(record), JSON.stringify(validRecord.errors)).toBe(true);
    expect(record.vcs).toEqual({ type: "git", revision: head });
    expect(record.tool?.name).toBe(agent.tool);
    // The agent's lines to the AI contributor, the person's to "unknown" (Waymark saw the change, not who made it).
    expect(rangesOf(record)).toEqual({ "src/mean.js": ["1-3 ai"], "src/sum.js": ["1-1 unknown", "3-3 ai"] });
    for (const file of record.files) expect(file.conversations[0]?.contributor).toEqual({ type: "ai", model_id: agent.modelId });
  }
  // `git blame` of the end commit puts the task's commit on exactly the lines the ranges cover.
  for (const [path, lines] of Object.entries({ "src/mean.js": [1, 2, 3], "src/sum.js": [1, 3] })) {
    const blamed = project
      .git("blame", "--line-porcelain", head, "--", path)
      .split("\n")
      .filter((line) => /^[0-9a-f]{40} /.test(line))
      .map((line) => line.split(" "))
      .filter(([commit]) => commit === head)
      .map((fields) => Number(fields[2]));
    expect(blamed, path).toEqual(lines);
  }

  // The decision reached the record, its token replaced by the marker; no secret is in anything stored.
  const everything = [page, markdown, json, shared, byToken, JSON.stringify(structured)];
  expect(json).toContain("GITHUB_TOKEN=[redacted: GitHub token] was pasted");
  for (const text of everything) {
    expect(text).not.toContain(AWS_SECRET);
    expect(text).not.toContain(GITHUB_TOKEN);
    expect(text).not.toContain(GITHUB_TOKEN.slice(4));
  }
}
