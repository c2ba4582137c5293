import { env, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { ftsTerms, matchAll, matchAny, relatedQuery } from "../../src/account/memory";
import type { MemoryDocument } from "../../src/domain/memory-documents";
import { LIMITS } from "../../src/limits";
import { callTool, connect, ok } from "../support/mcp-client";
import { accountIndexed, ORIGIN, signIn, TOKENS, workerFetch, workerTarget } from "../support/worker";
import { workflowSummary } from "./fixtures";

/** REST errors are {code, message}; the assertions read them as one line. */
const errorText = (body: unknown) => `${(body as { code: string }).code}: ${(body as { message: string }).message}`;

const account = (name: string) => env.ACCOUNT.get(env.ACCOUNT.idFromName(name));

function doc(id: string, title: string, body = "", kind: MemoryDocument["kind"] = "decision"): MemoryDocument {
  return {
    id,
    kind,
    workflow_id: "wf_memorytestaaaaaaaaaaa",
    task_id: "tk_x",
    title,
    body,
    context: "",
    text: `${title} → ${body}`,
    at: "2026-01-01T00:00:00.000Z",
  };
}

describe("user text is quoted for FTS5, term by term", () => {
  it.each([
    ["plain words", "jwt library", ['"jwt"', '"library"']],
    ["hyphen (FTS column filter / NOT syntax)", "step-3", ['"step-3"']],
    ["operators stay words", "a NEAR b OR c AND NOT d", ['"a"', '"NEAR"', '"b"', '"OR"', '"c"', '"AND"', '"NOT"', '"d"']],
    ["prefix star", "auth*", ['"auth*"']],
    ["lone punctuation is dropped", '* " : ( ) ^ -', []],
    ["inner quotes are doubled", 'say "hi"', ['"say"', '"""hi"""']],
    ["column filter", "title:secret", ['"title:secret"']],
    ["NEAR group", "NEAR(a b, 2)", ['"NEAR(a"', '"b,"', '"2)"']],
    ["duplicates collapse, case-insensitively", "Auth auth AUTH", ['"Auth"']],
    ["unicode letters", "café ünïcode 日本", ['"café"', '"ünïcode"', '"日本"']],
    ["empty", "   ", []],
  ])("%s", (_name, input, expected) => {
    expect(ftsTerms(input)).toEqual(expected);
  });

  it("joins terms with AND (implicit) or OR, and gives null when nothing is searchable", () => {
    expect(matchAll("a b")).toBe('"a" "b"');
    expect(matchAny("a b")).toBe('"a" OR "b"');
    expect(matchAll("* :")).toBeNull();
  });

  it("bounds the number of terms", () => {
    expect(ftsTerms(Array.from({ length: 100 }, (_, i) => `w${i}`).join(" "))).toHaveLength(32);
  });

  it("builds the related-work query from name, goal and areas without filler words", () => {
    expect(relatedQuery(["Add the JWT middleware", "Verify tokens on routes", "src/api/**", "auth"])).toBe(
      '"JWT" OR "middleware" OR "Verify" OR "tokens" OR "routes" OR "src" OR "api" OR "auth"',
    );
    expect(relatedQuery(["a", "the"])).toBeNull();
  });
});

describe("the memory index", () => {
  const stub = account("memory-index");
  const corpus = [
    doc("dc_1", "Which JWT library?", "jose runs on the edge"),
    doc("dc_2", "Migration step-3 ordering", "run step 3 before step 4"),
    doc("dc_3", "Use NEAR operator in search?", "no: quote every term"),
    doc("dc_4", "Column title:secret leaked?", "no leak"),
    doc("is_1", 'Quote "smart" handling', "double the quotes", "issue"),
    doc("dc_5", "Cache OR database for sessions", "database"),
    doc("dc_6", "Migrating the authentication callbacks", "rewrite callbacks"),
  ];

  it("searches safely whatever the user types (table)", async () => {
    await stub.recordWorkflow("memory-index", workflowSummary("wf_memorytestaaaaaaaaaaa", "Memory"), { documents: corpus });
    const cases: [string, string[]][] = [
      ["jwt", ["dc_1"]],
      ["JWT library", ["dc_1"]],
      ["step-3", ["dc_2"]],
      ["NEAR", ["dc_3"]],
      ["NEAR(", ["dc_3"]],
      ['"smart', ["is_1"]],
      ['"smart"', ["is_1"]],
      ["title:secret", ["dc_4"]],
      ["OR", ["dc_5"]],
      ["cache OR", ["dc_5"]],
      ["*", []],
      ['"', []],
      [":", []],
      ["-", []],
      ["jwt*", ["dc_1"]],
      ["^jwt", ["dc_1"]],
      ["AND", []],
      ["migration", ["dc_2", "dc_6"]], // porter stemming: "migrating" matches too
    ];
    for (const [query, expected] of cases) {
      const found = await stub.search(query, 10);
      expect(found.results.map((r) => r.id).sort(), query).toEqual(expected.sort());
    }
  });

  it("falls back to any-term matching when no document has every term, and says so", async () => {
    const found = await stub.search("jwt nonexistentword", 10);
    expect(found.match).toBe("any");
    expect(found.results.map((r) => r.id)).toEqual(["dc_1"]);
  });

  it("upserts by entity id: a replayed push does not duplicate, a changed entity replaces its text", async () => {
    const before = (await stub.search("jwt", 10)).results.length;
    await stub.recordWorkflow("memory-index", workflowSummary("wf_memorytestaaaaaaaaaaa", "Memory"), { documents: corpus });
    expect((await stub.search("jwt", 10)).results.length).toBe(before);
    await stub.recordWorkflow("memory-index", workflowSummary("wf_memorytestaaaaaaaaaaa", "Memory"), {
      documents: [doc("dc_1", "Which token library?", "paseto")],
    });
    expect((await stub.search("jwt", 10)).results).toEqual([]);
    expect((await stub.search("paseto", 10)).results.map((r) => r.id)).toEqual(["dc_1"]);
  });
});

describe("related work ranks only the newest documents", () => {
  it("an old decision drops out of start_task's suggestions once RELATED_WINDOW newer documents arrive, yet stays searchable", async () => {
    const stub = account("memory-window");
    const summary = workflowSummary("wf_memorywindowaaaaaaaa", "Window");
    const task = { workflow_id: "wf_other", task_id: "tk_new", name: "Pick a zeppelin codec", goal: "codec", areas: [] };
    await stub.recordWorkflow("memory-window", summary, { documents: [doc("dc_old", "Which zeppelin codec?", "opus")] });
    expect((await stub.related(task)).map((r) => r.text)).toEqual(["Which zeppelin codec? → opus"]);
    const filler = Array.from({ length: LIMITS.RELATED_WINDOW }, (_, i) => doc(`dc_f${i}`, `filler ${i}`, "unrelated"));
    await stub.recordWorkflow("memory-window", summary, { documents: filler });
    expect(await stub.related(task)).toEqual([]);
    expect((await stub.search("zeppelin", 10)).results.map((r) => r.id)).toEqual(["dc_old"]);
    // A newer matching decision is found again.
    await stub.recordWorkflow("memory-window", summary, { documents: [doc("dc_new", "Zeppelin codec again", "flac")] });
    expect((await stub.related(task)).map((r) => r.text)).toEqual(["Zeppelin codec again → flac"]);
  });
});

describe("related work and the words half the documents hold", () => {
  it("ranks the rarer words; documents holding only common words fill the rest, other workflows' first, newest first", async () => {
    const stub = account("memory-common");
    const mine = "wf_memorycommonaaaaaaaaa";
    // "widget" is in every document, so BM25 gives it no weight: the oldest's title full of it no longer puts it ahead.
    const documents = [
      doc("dc_c1", "Widget widget layout", "widget"),
      { ...doc("dc_c2", "Spacing", "widget"), workflow_id: mine },
      doc("dc_c3", "Colours", "widget"),
      doc("dc_c4", "Zeppelin widget codec", "opus"),
      { ...doc("dc_c5", "Margins", "widget"), workflow_id: mine },
    ];
    await stub.recordWorkflow("memory-common", workflowSummary(mine, "Common"), { documents });
    const task = { workflow_id: mine, task_id: "tk_new", name: "Widget zeppelin", goal: "", areas: [] };
    expect((await stub.related(task)).map((r) => r.text)).toEqual([
      "Zeppelin widget codec → opus",
      "Colours → widget",
      "Widget widget layout → widget",
    ]);
    // The task's own logs stay out of the fill too; with only common words, the fill is all there is.
    expect((await stub.related({ ...task, name: "Widget", task_id: "tk_x" })).map((r) => r.text)).toEqual([]);
    expect((await stub.related({ ...task, name: "Widget" })).map((r) => r.text)).toEqual([
      "Zeppelin widget codec → opus",
      "Colours → widget",
      "Widget widget layout → widget",
    ]);
  });
});

describe("the bound on documents", () => {
  it(`keeps at most ${LIMITS.MEMORY_DOCUMENTS} documents, the oldest leaving first, and counts them once per slack`, async () => {
    const stub = account("memory-bound");
    const summary = workflowSummary("wf_memoryboundaaaaaaaaa", "Bound");
    await stub.recordWorkflow("memory-bound", summary, { documents: [doc("dc_b0", "oldest quokka")] });
    const count = () =>
      runInDurableObject(stub, (_instance, state) => state.storage.sql.exec<{ n: number }>("SELECT count(*) AS n FROM memory_fts").one().n);
    await runInDurableObject(stub, (_instance, state) => {
      // Filled to the bound as pushes would fill it (each document its FTS entry, its place the next rowid).
      state.storage.sql.exec(
        `WITH RECURSIVE n(i) AS (SELECT 2 UNION ALL SELECT i + 1 FROM n WHERE i < ?)
         INSERT INTO memory_fts (rowid, title, body, context, ref, kind, workflow_id, task_id, text, at)
         SELECT i, 'filler ' || i, '', '', 'dc_b' || (i - 1), 'decision', 'wf_memoryboundaaaaaaaaa', 'tk_x', 'filler ' || i,
           '2026-01-01T00:00:00.000Z' FROM n`,
        LIMITS.MEMORY_DOCUMENTS,
      );
    });
    expect(await count()).toBe(LIMITS.MEMORY_DOCUMENTS);
    await stub.recordWorkflow("memory-bound", summary, { documents: [doc("dc_new", "newest quokka")] });
    const pruned = await count();
    expect(pruned).toBeLessThan(LIMITS.MEMORY_DOCUMENTS);
    expect((await stub.search("quokka", 10)).results.map((r) => r.id)).toEqual(["dc_new"]);
    // Below the bound again by the slack: the next documents are added without pruning.
    await stub.recordWorkflow("memory-bound", summary, { documents: [doc("dc_next", "next quokka")] });
    expect(await count()).toBe(pruned + 1);
  });
});

describe("memory through the tools", () => {
  it("start_task returns earlier decisions and issues of other workflows, compactly, in both forms", async () => {
    const client = await connect(workerTarget());
    const first = await ok<{ workflow_id: string }>(client, "start_workflow", { name: "Auth v1" });
    const task = await ok<{ task_id: string }>(client, "start_task", {
      workflow_id: first.workflow_id,
      name: "JWT middleware",
      goal: "Verify JWT tokens on API routes",
      areas: ["auth"],
    });
    await ok(client, "log_decision", {
      task_id: task.task_id,
      category: "library_choice",
      question: "Which JWT library?",
      options_considered: ["jsonwebtoken", "jose"],
      chosen: "jose",
      reasoning: "Runs on the edge runtime",
    });
    await ok(client, "log_issue", {
      task_id: task.task_id,
      type: "bug_encountered",
      description: "Clock skew made fresh tokens look expired",
      resolution: "Allow 30 seconds of leeway when verifying tokens",
    });
    await ok(client, "log_decision", {
      task_id: task.task_id,
      category: "other",
      question: "Where do CSS variables live?",
      chosen: "theme.css",
      reasoning: "One file",
    });
    await ok(client, "complete_task", { task_id: task.task_id, status: "success", outcome: { summary: "Done" } });
    await accountIndexed(first.workflow_id);

    const second = await ok<{ workflow_id: string }>(client, "start_workflow", { name: "Auth v2" });
    const outcome = await callTool(client, "start_task", {
      workflow_id: second.workflow_id,
      name: "Refresh tokens",
      goal: "Issue and verify refresh JWT tokens",
      areas: ["auth"],
    });
    expect(outcome.isError).toBe(false);
    const related = outcome.structured.related as { kind: string; task_id: string; workflow_id: string; text: string }[];
    expect(related.length).toBeGreaterThan(0);
    expect(related.length).toBeLessThanOrEqual(3);
    expect(related.map((r) => r.text)).toContain("Which JWT library? → jose");
    expect(related.every((r) => r.workflow_id === first.workflow_id && r.task_id === task.task_id)).toBe(true);
    // A decision that shares only its task's context with the new task ranks after the ones about the topic.
    expect(
      related
        .map((r) => r.text)
        .slice(0, 2)
        .sort(),
    ).toEqual(
      ["Clock skew made fresh tokens look expired → Allow 30 seconds of leeway when verifying tokens", "Which JWT library? → jose"].sort(),
    );
    expect(JSON.stringify(related).length).toBeLessThan(600);
    expect(outcome.text).toContain("related decision");
    expect(outcome.text).toContain("Which JWT library? → jose");
  });

  it("never returns the new task's own logs and prefers other workflows", async () => {
    const client = await connect(workerTarget());
    const wf = await ok<{ workflow_id: string }>(client, "start_workflow", { name: "Billing" });
    const a = await ok<{ task_id: string }>(client, "start_task", { workflow_id: wf.workflow_id, name: "Stripe webhooks", goal: "Stripe" });
    await ok(client, "log_decision", {
      task_id: a.task_id,
      category: "other",
      question: "Stripe webhook signature check?",
      chosen: "stripe SDK",
      reasoning: "stripe",
    });
    const other = await ok<{ workflow_id: string }>(client, "start_workflow", { name: "Payments" });
    const b = await ok<{ task_id: string }>(client, "start_task", {
      workflow_id: other.workflow_id,
      name: "Stripe refunds",
      goal: "Stripe",
    });
    await ok(client, "log_decision", {
      task_id: b.task_id,
      category: "other",
      question: "Stripe refunds API?",
      chosen: "v2",
      reasoning: "stripe",
    });
    await accountIndexed(wf.workflow_id, other.workflow_id);
    const c = await ok<{ related?: { workflow_id: string; task_id: string }[] }>(client, "start_task", {
      workflow_id: wf.workflow_id,
      name: "Stripe invoices",
      goal: "Stripe invoices",
    });
    expect(c.related?.[0]?.workflow_id).toBe(other.workflow_id);
    expect(c.related?.map((r) => r.workflow_id)).toContain(wf.workflow_id);
  });

  it("get_workflow query: results, any-term fallback, bad input named", async () => {
    const client = await connect(workerTarget());
    const found = await ok<{ match: string; results: { kind: string; text: string }[] }>(client, "get_workflow", { query: "jwt library" });
    expect(found.match).toBe("all");
    expect(found.results[0]?.text).toBe("Which JWT library? → jose");
    const tricky = await callTool(client, "get_workflow", { query: 'NEAR("jwt" *) OR step-3 : ^' });
    expect(tricky.isError).toBe(false);
    const empty = await callTool(client, "get_workflow", { query: "" });
    expect(empty.isError).toBe(true);
    expect(empty.text).toBe("INPUT_VALIDATION_ERROR: query: must not be empty");
    const big = await callTool(client, "get_workflow", { query: "x", limit: 21 });
    expect(big.text).toBe("INPUT_VALIDATION_ERROR: limit: must be ≤ 20");
  });

  it("get_workflow query is per account", async () => {
    const globex = await connect(workerTarget(TOKENS.globex));
    const found = await ok<{ results: unknown[] }>(globex, "get_workflow", { query: "jwt" });
    expect(found.results).toEqual([]);
  });
});

describe("GET /api/search", () => {
  it("answers with a bearer token or the dashboard session cookie, never without", async () => {
    const bearer = await workerFetch(`${ORIGIN}/api/search?q=jwt`, { headers: { Authorization: `Bearer ${TOKENS.acme}` } });
    expect(bearer.status).toBe(200);
    const body = (await bearer.json()) as { query: string; results: { text: string }[] };
    expect(body.results.map((r) => r.text)).toContain("Which JWT library? → jose");

    const cookie = await signIn(TOKENS.acme);
    const session = await workerFetch(`${ORIGIN}/api/search?q=${encodeURIComponent('step-3 "x" NEAR *')}`, { headers: { Cookie: cookie } });
    expect(session.status).toBe(200);

    const anonymous = await workerFetch(`${ORIGIN}/api/search?q=jwt`);
    expect(anonymous.status).toBe(401);
    const crossSite = await workerFetch(`${ORIGIN}/api/search?q=jwt`, { headers: { Cookie: cookie, Origin: "https://evil.example" } });
    expect(crossSite.status).toBe(403);
  });

  it("names the field and the rule for bad input", async () => {
    const auth = { headers: { Authorization: `Bearer ${TOKENS.acme}` } };
    const missing = await workerFetch(`${ORIGIN}/api/search`, auth);
    expect(missing.status).toBe(400);
    expect(errorText(await missing.json())).toBe("INPUT_VALIDATION_ERROR: q: is required (the words to search for)");
    const limit = await workerFetch(`${ORIGIN}/api/search?q=a&limit=99`, auth);
    expect(errorText(await limit.json())).toBe("INPUT_VALIDATION_ERROR: limit: must be a whole number from 1 to 20");
  });
});
