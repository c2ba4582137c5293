import { beforeAll, describe, expect, it } from "vitest";
import { pathsFromEvents } from "../../src/domain/path-entries";
import type { WorkflowEvent } from "../../src/domain/view";
import { connect, ok } from "../support/mcp-client";
import { accountIndexed, ORIGIN, TOKENS, workerFetch, workerTarget } from "../support/worker";

/**
 * The owner view's search over REST, as a script or CI job calls it: by text (the account's
 * memory index), by exact file path and by path prefix (the path index fed by the workflow
 * outbox), by status and needs-review, newest first, paged; with per-workflow and account totals.
 */
const api = async (path: string, token: string = TOKENS.globex) => {
  const response = await workerFetch(`${ORIGIN}${path}`, { headers: { Authorization: `Bearer ${token}` } });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
};
type Row = { id: string; name: string; files_changed: number; owner_url: string; match?: { text?: string; paths?: { path: string }[] } };
const names = (body: Record<string, unknown>) => (body.rows as Row[]).map((r) => r.name);

const file = (c: string) => ({ mode: "100644", blob: c.repeat(40) });

describe("searching the account's workflows", () => {
  const ids: Record<string, string> = {};

  beforeAll(async () => {
    const client = await connect(workerTarget(TOKENS.globex));
    const make = async (name: string, description: string, paths: string[], review = false) => {
      const wf = await ok<{ workflow_id: string }>(client, "start_workflow", { name, description, force_new: true });
      const task = await ok<{ task_id: string }>(client, "start_task", {
        workflow_id: wf.workflow_id,
        name: `${name} task`,
        goal: description,
      });
      await ok(client, "complete_task", {
        task_id: task.task_id,
        status: "success",
        outcome: { summary: "done", manual_review_needed: review },
        changes: { type: "checksum", transitions: paths.map((path) => ({ path, before: null, after: file("a") })) },
      });
      await accountIndexed(wf.workflow_id);
      ids[name] = wf.workflow_id;
    };
    await make("Tax engine", "Regional VAT for invoices", ["src/billing/tax.ts", "src/billing/rates.json"], true);
    await make("Billing export", "CSV export for accounting", ["src/billing.ts", "src/export/csv.ts"]);
    await make("Onboarding docs", "Rewrite the onboarding guide", ["docs/guide.md"]);
  });

  it("finds by text in the memory index, with the hit that matched", async () => {
    const { body } = await api("/api/workflows?q=onboarding");
    expect(names(body)).toEqual(["Onboarding docs"]);
    expect((body.rows as Row[])[0]?.owner_url).toBe(`${ORIGIN}/w/${ids["Onboarding docs"]}`);
    expect(names((await api("/api/workflows?q=VAT")).body)).toEqual(["Tax engine"]);
  });

  it.each([
    ["exact path", "path=src/billing/tax.ts", ["Tax engine"]],
    ["exact path, not a prefix of another", "path=src/billing", []],
    ["folder prefix", "path=src/billing/&prefix=true", ["Tax engine"]],
    ["name prefix spans files and folders", "path=src/billing&prefix=true", ["Billing export", "Tax engine"]],
    ["percent-encoded path", "path=docs%2Fguide.md", ["Onboarding docs"]],
    ["nothing there", "path=src/none/&prefix=true", []],
  ])("by %s", async (_name, query, expected) => {
    const { status, body } = await api(`/api/workflows?${query}`);
    expect(status).toBe(200);
    expect(names(body).sort()).toEqual(expected);
  });

  it("combines text, path, needs-review and status; newest first with totals", async () => {
    expect(names((await api("/api/workflows?q=invoices&path=src/billing&prefix=1")).body)).toEqual(["Tax engine"]);
    expect(names((await api("/api/workflows?needs_review=true")).body)).toEqual(["Tax engine"]);
    expect(names((await api("/api/workflows?status=failed")).body)).toEqual([]);
    const all = (await api("/api/workflows")).body;
    expect(names(all)).toEqual(["Onboarding docs", "Billing export", "Tax engine"]);
    expect((all.rows as Row[]).map((r) => r.files_changed)).toEqual([1, 2, 2]);
    expect(all).toMatchObject({ total: 3, page: 0, pages: 1, account_totals: { workflows: 3, tasks: 3, files_changed: 5 } });
  });

  it("says which task touched a file", async () => {
    const { body } = await api("/api/paths?path=src/billing/tax.ts");
    expect(body.results).toEqual([
      expect.objectContaining({ path: "src/billing/tax.ts", workflow_id: ids["Tax engine"], task_name: "Tax engine task", status: "A" }),
    ]);
    expect(body.searched).toBe("all task completions");
    // The dashboard's path filter, over REST: every completion searched.
    expect((await api("/api/workflows?path=src/billing/tax.ts")).body.paths_searched_all).toBe(true);
  });

  it.each([
    ["/api/workflows?status=open", "status: must be active, success, partial_success or failed"],
    ["/api/workflows?prefix=yes&path=a", 'prefix: must be "true" or "false"'],
    ["/api/workflows?page=-1", "page: must be a whole number ≥ 0"],
    [`/api/paths?path=${"a".repeat(1025)}`, "path: must be at most 1024 characters"],
    ["/api/paths", "path: is required (a repository-relative file path)"],
  ])("refuses %s", async (path, message) => {
    const { status, body } = await api(path);
    expect(status).toBe(400);
    expect(body).toEqual({ code: "INPUT_VALIDATION_ERROR", message });
  });

  it("shows nothing of another account", async () => {
    expect(names((await api("/api/workflows?q=onboarding", TOKENS.acme)).body)).toEqual([]);
    expect((await api("/api/paths?path=docs/guide.md", TOKENS.acme)).body.results).toEqual([]);
  });
});

describe("searching by a folder holds names that are not UTF-8", () => {
  it("finds them in their escaped form under the folder, on the dashboard's REST search and /api/paths", async () => {
    const client = await connect(workerTarget(TOKENS.acme));
    const wf = await ok<{ workflow_id: string }>(client, "start_workflow", { name: "Latin-1 names", force_new: true });
    const task = await ok<{ task_id: string }>(client, "start_task", { workflow_id: wf.workflow_id, name: "Import", goal: "g" });
    await ok(client, "complete_task", {
      task_id: task.task_id,
      status: "success",
      outcome: { summary: "done" },
      changes: { type: "checksum", transitions: [{ path: "/docs/caf%E9.md", before: null, after: file("a") }] },
    });
    await accountIndexed(wf.workflow_id);
    expect(names((await api("/api/workflows?path=docs/&prefix=true", TOKENS.acme)).body)).toEqual(["Latin-1 names"]);
    const { body } = await api("/api/paths?path=docs/&prefix=true", TOKENS.acme);
    expect(body.results).toEqual([expect.objectContaining({ path: "/docs/caf%E9.md", task_name: "Import", status: "A" })]);
    expect((await api(`/api/paths?path=${encodeURIComponent("/docs/caf%E9.md")}`, TOKENS.acme)).body.results).toHaveLength(1);
  });
});

describe("paths from events", () => {
  it("lists a completed task's added, modified, deleted and renamed paths (the old name as deleted)", () => {
    const event = {
      seq: 1,
      at: "2026-01-01T00:00:00.000Z",
      type: "task.completed",
      task_id: "tk_a",
      data: {
        id: "tk_a",
        name: "T",
        files_changed: { added: ["a"], modified: ["m"], deleted: ["d"], renamed: [{ from: "old", to: "new" }], uncommitted: [] },
      },
    } as unknown as WorkflowEvent;
    expect(pathsFromEvents([event]).map((e) => `${e.status} ${e.path}`)).toEqual(["A a", "M m", "D d", "D old", "R new"]);
    expect(pathsFromEvents([{ ...event, type: "task.started" }])).toEqual([]);
  });
});
