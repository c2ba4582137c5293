/**
 * The streamed exports (JSON and Markdown, shared and owner) of a workflow several pages long:
 * the same document as the whole view read back through the paged reads and written in one
 * piece, verifiable against its chain, and built one bounded page at a time (the workflow
 * object is watched: never two pages at once, every page within the bounds).
 */
import { env, runInDurableObject } from "cloudflare:test";
import { type ChainedEvent, verifyChain } from "@waymark/protocol/chain";
import { renderSummary } from "@waymark/protocol/pr-summary";
import { reviewCounts } from "@waymark/protocol/review-counts";
import type { SignedStatement } from "@waymark/protocol/statement";
import { checkExport } from "@waymark/protocol/verify";
import { describe, expect, it } from "vitest";
import type { FeedbackView, WorkflowView } from "../../src/domain/view";
import { newWorkflowId } from "../../src/ids";
import { LIMITS } from "../../src/limits";
import { publishedKeys } from "../../src/signing";
import { file } from "../domain/fixtures";
import { ON_PAGE, ORIGIN, rpc, signIn, workerFetch } from "../support/worker";
import { readWhole, stubFor, value } from "../workflow/rpc";

const ACME = "acme";
const TASKS = 420;

/**
 * More tasks than two pages and more events than three, with subtasks (their parents started
 * before and completed after them), logs of every kind, review items, files and feedback.
 */
async function bigWorkflow() {
  const id = newWorkflowId();
  const stub = stubFor(id);
  value(await stub.startWorkflow(ACME, id, { name: "Big", description: "Many pages", plan: [{ step: "1", goal: "All of it" }] }));
  const token = value(await stub.manageShare(ACME, "rotate", null)).token as string;
  let parent: string | null = null;
  let decisionId = "";
  let issueId = "";
  for (let i = 0; i < TASKS; i++) {
    const nested: boolean = parent !== null && i % 7 !== 0;
    const task: string = value(
      await stub.startTask(ACME, {
        workflow_id: id,
        name: `Task ${i}`,
        goal: `Goal ${i}`,
        ...(nested && parent ? { parent_task_id: parent } : {}),
      }),
    ).task_id;
    if (i % 3 === 0)
      decisionId = value(
        await stub.logDecision(ACME, { task_id: task, category: "other", question: `Q${i}?`, chosen: "a", reasoning: "b" }),
      ).id;
    if (i % 5 === 0) {
      issueId = value(
        await stub.logIssue(ACME, {
          task_id: task,
          type: "other",
          description: `D${i}`,
          resolution: "R",
          requires_human_review: i % 10 === 0,
        }),
      ).id;
    }
    value(await stub.logMilestone(ACME, { task_id: task, message: `m${i}` }));
    if (!nested) {
      // A parent stays open for its next six subtasks.
      if (parent) value(await stub.completeTask(ACME, { task_id: parent, status: "success", outcome: { summary: "parent done" } }));
      parent = task;
      continue;
    }
    value(
      await stub.completeTask(ACME, {
        task_id: task,
        status: i % 11 === 0 ? "partial_success" : "success",
        outcome: { summary: `Done ${i}`, ...(i % 13 === 0 ? { manual_review_needed: true, manual_review_reason: "look" } : {}) },
        changes: { type: "checksum", transitions: [{ path: `src/t${i}.ts`, before: null, after: file(`t${i}`) }] },
      }),
    );
  }
  if (parent) value(await stub.completeTask(ACME, { task_id: parent, status: "success", outcome: { summary: "last parent" } }));
  value(await stub.addFeedback(ACME, { target: "decision", target_id: decisionId, verdict: "approved", body: "Fine", ...ON_PAGE }));
  value(await stub.addFeedback(ACME, { target: "issue", target_id: issueId, verdict: "changes_requested", body: "Again", ...ON_PAGE }));
  value(await stub.addFeedback(ACME, { target: "workflow", target_id: id, verdict: "comment", body: "Overall good", ...ON_PAGE }));
  return { id, stub, token };
}

type Calls = { name: string; limit: number }[];

/** The whole view as an export writes it: the schema first, the device-signed payloads (none here: no device signed) and the signed statement last. */
/** The export of a whole view: its members, the review counts the protocol's function gives for it, the statement. */
function withStatement(view: WorkflowView & { feedback?: FeedbackView[] }, statement: SignedStatement): string {
  const review = reviewCounts(view, view.feedback ?? []);
  return JSON.stringify({ $schema: `${ORIGIN}/schemas/export-v1.json`, ...view, review, device_signed: [], statement }, null, 2);
}

/** Watches the object's reader: every page asked for, and the most asked for at once. */
async function watch(stub: ReturnType<typeof stubFor>): Promise<{ calls: Calls; maxInFlight: () => number }> {
  const calls: Calls = [];
  let inFlight = 0;
  let maxInFlight = 0;
  await runInDurableObject(stub, (instance) => {
    const reader = (instance as unknown as { reader: Record<string, (...args: unknown[]) => unknown> }).reader;
    for (const name of ["tasks", "rows", "events", "head"]) {
      const original = reader[name]?.bind(reader);
      if (!original) throw new Error(`the reader has no ${name}`);
      reader[name] = async (...args: unknown[]) => {
        const limit = name === "rows" ? args[3] : name === "head" ? 0 : args[2];
        calls.push({ name, limit: Number(limit) });
        inFlight++;
        maxInFlight = Math.max(maxInFlight, inFlight);
        try {
          return await original(...args);
        } finally {
          inFlight--;
        }
      };
    }
  });
  return { calls, maxInFlight: () => maxInFlight };
}

describe("streamed exports of a workflow several pages long", () => {
  it("give the whole view's JSON byte for byte, verifiable against the chain, and its Markdown", async () => {
    const { id, stub, token } = await bigWorkflow();
    // What the exports were before streaming: the whole view, written in one piece.
    const shared = value(await readWhole(stub, { share_token: token }, true));
    const owner = value(await readWhole(stub, ACME, true, true));
    const ownerExport = owner;
    expect(shared?.tasks).toHaveLength(TASKS);
    expect(shared?.events?.length).toBeGreaterThan(2 * LIMITS.EVENTS_PAGE);

    const keys = await publishedKeys(env as Env);
    const sharedJson = await (await workerFetch(`${ORIGIN}/s/${token}/export.json`)).text();
    const exported = JSON.parse(sharedJson) as { events: ChainedEvent[]; chain: { head: string }; statement: SignedStatement };
    // The whole view's document, byte for byte, between the schema it names and the statement signed over it.
    expect(sharedJson).toBe(withStatement(shared ?? {}, exported.statement));
    expect(verifyChain(id, exported.events, exported.chain.head)).toMatchObject({ ok: true, events: exported.events.length });
    expect(await checkExport(exported, { keys, signers: null })).toMatchObject({
      problems: [],
      signature: { status: "ok" },
      events: exported.events.length,
    });

    const cookie = await signIn();
    const ownerJson = await (await workerFetch(`${ORIGIN}/w/${id}/export.json`, { headers: { Cookie: cookie } })).text();
    const ownerStatement = (JSON.parse(ownerJson) as { statement: SignedStatement }).statement;
    expect(ownerJson).toBe(withStatement(ownerExport, ownerStatement));
    expect(await checkExport(JSON.parse(ownerJson), { keys, signers: null })).toMatchObject({ problems: [], signature: { status: "ok" } });

    const summary = renderSummary(owner);
    for (const md of [
      await (await workerFetch(`${ORIGIN}/s/${token}/export.md`)).text(),
      await (await workerFetch(`${ORIGIN}/w/${id}/export.md`, { headers: { Cookie: cookie } })).text(),
    ]) {
      expect(md.startsWith(summary.trimEnd())).toBe(true);
      expect(md.slice(summary.trimEnd().length).split("\n")).toEqual([
        "",
        "",
        "### Reviewer feedback",
        "",
        expect.stringMatching(/^- \*\*approved\*\* on decision Q\d+\? \(signed in with a bootstrap token, on the page\): Fine$/),
        expect.stringMatching(/^- \*\*changes requested\*\* on issue other \(signed in with a bootstrap token, on the page\): Again$/),
        "- **comment** on the workflow (signed in with a bootstrap token, on the page): Overall good",
        "",
        `<sub>The JSON export of this record carries a statement signed with key \`${keys[0]?.kid}\`: check it with \`waymark verify export.json --endpoint ${ORIGIN}\` (public keys: \`${ORIGIN}/.well-known/waymark-signing-keys.json\`).</sub>`,
        "",
      ]);
    }
    expect(summary).toContain("### ⚠ Needs human review");
    expect(summary).toContain(`#### ${Math.ceil(TASKS / 7)} Task ${7 * (Math.ceil(TASKS / 7) - 1)}`);
  }, 120_000);

  it("are built a page at a time, like the workflow resource: never the whole view, never two pages at once, every page within the bounds", async () => {
    const { id, stub, token } = await bigWorkflow();
    const watched = await watch(stub);
    const cookie = await signIn();
    for (const url of [`/s/${token}/export.json`, `/s/${token}/export.md`, `/w/${id}/export.json`, `/w/${id}/export.md`]) {
      const response = await workerFetch(`${ORIGIN}${url}`, { headers: url.startsWith("/w/") ? { Cookie: cookie } : {} });
      expect(response.status).toBe(200);
      expect((await response.text()).length).toBeGreaterThan(100_000);
    }
    // The workflow resource: the head and one page of each array, whatever the workflow's size.
    const before = watched.calls.length;
    const { body } = await rpc({ jsonrpc: "2.0", id: 1, method: "resources/read", params: { uri: `waymark://workflows/${id}` } });
    const read = body?.result as { contents: { text: string }[] } | undefined;
    const resource = JSON.parse(read?.contents[0]?.text ?? "{}") as { truncated?: object };
    expect(resource.truncated).toBeDefined();
    expect(watched.calls.slice(before).map((call) => call.name)).toEqual(["head", "rows", "rows", "rows", "rows"]);
    expect(watched.maxInFlight()).toBe(1);
    const pages = watched.calls.filter((call) => call.name !== "head");
    expect(pages.length).toBeGreaterThan(4 * 5);
    for (const call of pages) expect(call.limit).toBeLessThanOrEqual(Math.max(LIMITS.READ_PAGE_ITEMS, LIMITS.EVENTS_PAGE));
    expect(watched.calls.filter((call) => call.name === "head")).toHaveLength(5);
  }, 120_000);
});
