/**
 * Pull-request review comments reach the agent, against a real `wrangler dev`: the owner configures
 * the account's GitHub receiver, an agent's task commits through the real helper, and GitHub's
 * documented payloads (@octokit/webhooks-examples, test/fixtures/github) for that pull request are
 * delivered signed as GitHub signs them (X-Hub-Signature-256). The comment lands on the task whose
 * commit and lines it is on, and the agent's next tool result carries it with its file and line.
 * A redelivery adds nothing; unsigned, mis-signed, tampered and oversized deliveries are refused and
 * change nothing; a review by a person's account is a verdict, a bot's is a comment.
 */
import { spawnSync } from "node:child_process";
import { createHmac, randomUUID } from "node:crypto";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import type { Client } from "@modelcontextprotocol/client";
import Ajv2020 from "ajv/dist/2020.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { cleanupTempDirs, Repo, tempDir } from "../../client-helper/test/fixtures";
import { BIN, ensureBuilt, SYSTEM_NODE } from "../../client-helper/test/support";
import { connectThroughHelper } from "../support/agents";
import type { DevServer } from "../support/dev-server";
import { eventually } from "../support/eventually";
import { ok } from "../support/mcp-client";
import { sharedDevServer } from "../support/shared-server";

type Json = Record<string, unknown>;
const fixture = (name: string) => JSON.parse(readFileSync(join(import.meta.dirname, `../fixtures/github/${name}.json`), "utf8")) as Json;

let server: DevServer;
let agent: Client;
let receiver: { url: string; secret: string; id: string };
let scene: { workflow: string; parser: string; followUp: string; head: string; base: string; dir: string };

async function api(method: string, path: string, token = server.token, body?: unknown) {
  const response = await fetch(`${server.url}${path}`, {
    method,
    headers: { Authorization: `Bearer ${token}`, ...(body === undefined ? {} : { "Content-Type": "application/json" }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: response.status, body: (await response.json()) as Json };
}

/** A delivery as GitHub sends it: its headers, the body signed with the webhook's secret. */
async function deliver(
  event: string,
  payload: Json | string,
  options: { id?: string; secret?: string | null; signature?: string; url?: string; signed?: string } = {},
) {
  const body = typeof payload === "string" ? payload : JSON.stringify(payload);
  const secret = options.secret === undefined ? receiver.secret : options.secret;
  const headers: Record<string, string> = {
    "Content-Type": "application/json",
    "User-Agent": "GitHub-Hookshot/044aadd",
    "X-GitHub-Event": event,
    "X-GitHub-Delivery": options.id ?? randomUUID(),
    "X-GitHub-Hook-ID": "292430182",
  };
  if (options.signature !== undefined) headers["X-Hub-Signature-256"] = options.signature;
  else if (secret !== null)
    headers["X-Hub-Signature-256"] = `sha256=${createHmac("sha256", secret)
      .update(options.signed ?? body)
      .digest("hex")}`;
  const response = await fetch(options.url ?? receiver.url, { method: "POST", headers, body });
  return { status: response.status, body: (await response.json()) as Json };
}

/** GitHub's review-comment payload, on this pull request's head commit, file and line. */
function lineComment(body: string, path: string, line: number | null): Json {
  const payload = fixture("pull_request_review_comment.created");
  const comment = payload.comment as Json;
  Object.assign(comment, { body, path, line, original_line: line, commit_id: scene.head, original_commit_id: scene.head });
  ((payload.pull_request as Json).head as Json).sha = scene.head;
  return payload;
}

function review(state: string, body: string | null, type = "User"): Json {
  const payload = fixture("pull_request_review.submitted");
  const item = payload.review as Json;
  Object.assign(item, { state, body, commit_id: scene.head });
  (item.user as Json).type = type;
  (payload.sender as Json).type = type;
  ((payload.pull_request as Json).head as Json).sha = scene.head;
  return payload;
}

/** The job summary `waymark ci` writes for the pull request (the repository's range), with a read token. */
async function ciSummary(): Promise<string> {
  const readToken = String((await api("POST", "/api/tokens", server.token, { name: "ci", scopes: ["read"] })).body.token);
  const summary = join(tempDir("waymark-ci-"), "summary.md");
  const run = spawnSync(SYSTEM_NODE, [BIN, "ci", "--base", scene.base, "--head", scene.head, "--summary", summary], {
    cwd: scene.dir,
    env: { ...process.env, WAYMARK_URL: server.url, WAYMARK_TOKEN: readToken, GITHUB_ACTIONS: "", GITLAB_CI: "" },
    encoding: "utf8",
  });
  expect(run.status, run.stderr).toBe(0);
  return readFileSync(summary, "utf8");
}

async function feedbackOf(workflow: string): Promise<Json[]> {
  const response = await fetch(`${server.url}/api/workflows/${workflow}/export.json`, {
    headers: { Authorization: `Bearer ${server.token}` },
  });
  return ((await response.json()) as { feedback: Json[] }).feedback;
}

beforeAll(async () => {
  ensureBuilt();
  server = sharedDevServer();
  const repo = Repo.init().write("src/parse.ts", "export const a = 1;\n").commitAll("initial");
  const base = repo.git("rev-parse", "HEAD").trim();
  agent = await connectThroughHelper(server, repo.dir, { cacheHome: tempDir("waymark-cache-") });
  const { workflow_id } = (await ok(agent, "start_workflow", { name: "Review me" })) as { workflow_id: string };
  const parser = String((await ok(agent, "start_task", { workflow_id, name: "Parser", goal: "parse", areas: ["src"] })).task_id);
  repo
    .write("src/parse.ts", "export const a = 1;\nexport const parse = (s: string) => Number(s);\nexport const b = 2;\n")
    .commitAll("Parse");
  await ok(agent, "complete_task", { task_id: parser, status: "success", outcome: { summary: "parses" } });
  const followUp = String((await ok(agent, "start_task", { workflow_id, name: "Follow-up", goal: "address review" })).task_id);
  scene = { workflow: workflow_id, parser, followUp, head: repo.git("rev-parse", "HEAD").trim(), base, dir: repo.dir };
  // The account's commit index is fed after the completion's reply (the workflow's outbox): a review comes later.
  await eventually(
    "the commit index knows the task's commit",
    async () => ((await api("GET", `/api/commits?sha=${scene.head}`)).body.results as Json[]).length > 0 || null,
    10_000,
  );
  const configured = await api("PUT", "/api/github/receiver");
  expect(configured.status, JSON.stringify(configured.body)).toBe(201);
  receiver = { url: String(configured.body.url), secret: String(configured.body.secret), id: String(configured.body.id) };
}, 120_000);
afterAll(async () => {
  await agent?.close();
  cleanupTempDirs();
});

describe("the GitHub receiver", () => {
  it("is configured by the owner with admin and write; a read token or an admin-only token may not", async () => {
    expect(receiver.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/hooks\/github\/[a-z0-9-]+\/ghr_[a-z2-7]{16}$/);
    expect(receiver.secret).toMatch(/^ghsec_/);
    const status = await api("GET", "/api/github/receiver");
    expect(status.body).toMatchObject({ id: receiver.id, url: receiver.url });
    expect(status.body).not.toHaveProperty("secret");
    for (const scopes of [["read"], ["admin"], ["admin", "read"]]) {
      const token = String((await api("POST", "/api/tokens", server.token, { name: scopes.join("+"), scopes })).body.token);
      expect((await api("PUT", "/api/github/receiver", token)).status, scopes.join(" ")).toBe(403);
    }
  });

  it("answers GitHub's ping", async () => {
    expect(await deliver("ping", fixture("ping"))).toMatchObject({ status: 200, body: { ok: true } });
  });

  it("delivers a line comment to the task that changed that line, and the agent's next tool result carries it with file and line", async () => {
    const delivered = await deliver("pull_request_review_comment", lineComment("Use Number.parseInt here", "src/parse.ts", 2));
    expect(delivered).toMatchObject({
      status: 200,
      body: { delivered: true, target: "task", target_id: scene.parser, verdict: "comment" },
    });
    const result = await agent.callTool({ name: "log_milestone", arguments: { task_id: scene.followUp, message: "reading the review" } });
    const text = (result.content as { type: string; text: string }[]).map((c) => c.text).join("\n");
    expect(text).toContain(`Reviewer feedback: [comment on ${scene.parser} at src/parse.ts:2] Use Number.parseInt here`);
    const digest = (result.structuredContent as { reviewer_feedback: { items: Json[] } }).reviewer_feedback;
    expect(digest.items[0]).toMatchObject({ on: scene.parser, at: "src/parse.ts:2", verdict: "comment" });
    const [item] = await feedbackOf(scene.workflow);
    expect(item).toMatchObject({
      target: "task",
      target_id: scene.parser,
      channel: "pull_request",
      author: { via: "github", github_user: { login: "Codertocat", id: 21031067 } },
      location: { path: "src/parse.ts", line: 2, commit: scene.head },
    });
  });

  it("and the pull request's CI shows it among the reviewer feedback, where it was left", async () => {
    const text = await ciSummary();
    expect(text).toContain("| Reviewer feedback | 1 item |");
    expect(text).toContain("- comment on `src/parse.ts:2` (in a pull-request review) in Parser: Use Number.parseInt here");
  });

  it("is idempotent by delivery id: a redelivery is answered as the first was and adds nothing", async () => {
    const id = randomUUID();
    const payload = lineComment("Rename this", "src/parse.ts", 3);
    const first = await deliver("pull_request_review_comment", payload, { id });
    const before = (await feedbackOf(scene.workflow)).length;
    const again = await deliver("pull_request_review_comment", payload, { id });
    expect(again).toEqual({ status: first.status, body: { ...first.body, duplicate: true } });
    expect(await feedbackOf(scene.workflow)).toHaveLength(before);
  });

  it("refuses unsigned, mis-signed, tampered and oversized deliveries, and deliveries to another receiver or account, changing nothing", async () => {
    const before = (await feedbackOf(scene.workflow)).length;
    const payload = lineComment("Injected by a stranger", "src/parse.ts", 2);
    const text = JSON.stringify(payload);
    const refused = { code: "UNAUTHORIZED", message: "X-Hub-Signature-256: does not verify for this receiver" };
    const attacks: [string, Promise<{ status: number; body: Json }>][] = [
      ["unsigned", deliver("pull_request_review_comment", payload, { secret: null })],
      ["signed with another secret", deliver("pull_request_review_comment", payload, { secret: "ghsec_guess" })],
      ["the body changed after signing", deliver("pull_request_review_comment", text.replace("Injected", "Changed"), { signed: text })],
      [
        "GitHub's old SHA-1 header form",
        deliver("pull_request_review_comment", payload, {
          signature: `sha1=${createHmac("sha1", receiver.secret).update(text).digest("hex")}`,
        }),
      ],
      ["an empty signature", deliver("pull_request_review_comment", payload, { signature: "sha256=" })],
      [
        "another receiver id",
        deliver("pull_request_review_comment", payload, { url: receiver.url.replace(/ghr_\w+$/, "ghr_aaaaaaaaaaaaaaaa") }),
      ],
      [
        "an account this deployment does not have",
        deliver("pull_request_review_comment", payload, { url: receiver.url.replace(/\/github\/[^/]+\//, "/github/nobody/") }),
      ],
    ];
    for (const [name, attempt] of attacks) expect(await attempt, name).toEqual({ status: 401, body: refused });
    const huge = await deliver("pull_request_review_comment", { ...payload, padding: "x".repeat(600 * 1024) });
    expect(huge.status).toBe(413);
    expect(await feedbackOf(scene.workflow)).toHaveLength(before);
  });

  it("answers a refusal to a sender still writing its delivery: 140 to an account this deployment does not have, each a 401, none a reset connection", async () => {
    // A delivery of GitHub's size (about 23 KB), seven at a time as GitHub retries and redelivers:
    // the refusal comes before the body is read, and a body cancelled then reset the sender's
    // connection (11 of 140 in a run before it was left unread instead).
    const payload = lineComment("Sent to the wrong place", "src/parse.ts", 2);
    const url = receiver.url.replace(/\/github\/[^/]+\//, "/github/nobody/");
    const statuses: (number | string)[] = [];
    for (let round = 0; round < 20; round++) {
      const answers = await Promise.allSettled(Array.from({ length: 7 }, () => deliver("pull_request_review_comment", payload, { url })));
      for (const answer of answers) statuses.push(answer.status === "fulfilled" ? answer.value.status : String(answer.reason));
    }
    expect(statuses.filter((status) => status !== 401)).toEqual([]);
  });

  it("a person's approving review is a verdict on the workflow, named with its GitHub user; a bot's is a comment", async () => {
    const person = await deliver("pull_request_review", review("approved", "Looks right"));
    expect(person).toMatchObject({
      status: 200,
      body: { delivered: true, target: "workflow", target_id: scene.workflow, verdict: "approved" },
    });
    const bot = await deliver("pull_request_review", review("approved", "LGTM (automated)", "Bot"));
    expect(bot).toMatchObject({ status: 200, body: { delivered: true, verdict: "comment" } });
    const items = await feedbackOf(scene.workflow);
    expect(items.find((f) => f.body === "Looks right")).toMatchObject({ verdict: "approved", channel: "pull_request" });
    expect(items.find((f) => f.body === "LGTM (automated)")).toMatchObject({ verdict: "comment", channel: "pull_request" });
    // The pull request's CI lists the review with the workflow's feedback.
    expect(await ciSummary()).toContain("- approved (in a pull-request review) on the workflow: Looks right");
    // The wrapper review GitHub sends around line comments (no verdict, no text) adds nothing.
    expect(await deliver("pull_request_review", review("commented", null))).toMatchObject({ status: 202, body: { delivered: false } });
  });

  it("the export that holds pull-request feedback (its author, channel and location) is valid against the published schema", async () => {
    const schema = JSON.parse(readFileSync(join(import.meta.dirname, "../../docs/schemas/export-v1.json"), "utf8"));
    const validate = new Ajv2020({ allErrors: true, strict: true, allowUnionTypes: true }).compile(schema);
    const response = await fetch(`${server.url}/api/workflows/${scene.workflow}/export.json`, {
      headers: { Authorization: `Bearer ${server.token}` },
    });
    const document = (await response.json()) as { feedback: Json[] };
    expect(document.feedback.some((item) => item.location !== undefined)).toBe(true);
    expect(validate(document), JSON.stringify(validate.errors?.slice(0, 3))).toBe(true);
  });

  it("a comment on commits no task recorded is answered, not delivered", async () => {
    const payload = lineComment("Elsewhere", "src/parse.ts", 1);
    Object.assign(payload.comment as Json, { commit_id: "f".repeat(40), original_commit_id: "f".repeat(40) });
    ((payload.pull_request as Json).head as Json).sha = "e".repeat(40);
    expect(await deliver("pull_request_review_comment", payload)).toMatchObject({ status: 202, body: { delivered: false } });
  });

  it("stops when the token that configured it is revoked", async () => {
    const made = await api("POST", "/api/tokens", server.token, { name: "github", scopes: ["admin", "write"] });
    const token = String(made.body.token);
    const configured = await api("PUT", "/api/github/receiver", token);
    receiver = { url: String(configured.body.url), secret: String(configured.body.secret), id: String(configured.body.id) };
    expect((await deliver("pull_request_review_comment", lineComment("Before revocation", "src/parse.ts", 2))).status).toBe(200);
    expect((await api("DELETE", `/api/tokens/${String(made.body.id)}`)).status).toBe(200);
    expect((await deliver("pull_request_review_comment", lineComment("After revocation", "src/parse.ts", 2))).status).toBe(401);
  });
});
