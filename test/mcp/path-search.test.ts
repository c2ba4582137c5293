import type { Client } from "@modelcontextprotocol/client";
import { beforeAll, describe, expect, it } from "vitest";
import { clockPast } from "../support/eventually";
import { callTool, connect, ok } from "../support/mcp-client";
import { accountIndexed, TOKENS, workerTarget } from "../support/worker";

/**
 * "Which task touched src/billing/tax.ts?" asked as an agent asks it: get_workflow {query}
 * through the MCP endpoint, over several workflows and tasks of one account whose helper
 * reported the files each task changed. Another account's identical paths stay invisible.
 */
type Hit = { kind: string; workflow_id: string; task_id: string; task_name: string; path: string; status: string; at: string };

const blob = (c: string) => ({ mode: "100644", blob: c.repeat(40) });
const added = (path: string) => ({ path, before: null, after: blob("a") });
const modified = (path: string) => ({ path, before: blob("a"), after: blob("b") });
const deleted = (path: string) => ({ path, before: blob("a"), after: null });
type Transition = ReturnType<typeof added> | ReturnType<typeof modified> | ReturnType<typeof deleted>;

/** One task per entry, completed in order (so later ones are newer), each in its own workflow or a shared one. */
async function record(client: Client, workflowName: string, tasks: { name: string; changes: Transition[]; decision?: string }[]) {
  const { workflow_id } = await ok<{ workflow_id: string }>(client, "start_workflow", { name: workflowName, force_new: true });
  const ids: string[] = [];
  for (const task of tasks) {
    const { task_id } = await ok<{ task_id: string }>(client, "start_task", { workflow_id, name: task.name, goal: task.name });
    if (task.decision) {
      await ok(client, "log_decision", { task_id, category: "architecture", question: task.decision, chosen: "yes", reasoning: "r" });
    }
    await ok(client, "complete_task", {
      task_id,
      status: "success",
      outcome: { summary: "done" },
      changes: { type: "checksum", transitions: task.changes },
    });
    ids.push(task_id);
    // Distinct completion times, so "most recent first" has one right answer.
    await clockPast(Date.now());
  }
  await accountIndexed(workflow_id);
  return { workflow_id, ids };
}

const search = async (client: Client, query: string, limit?: number) => {
  const outcome = await callTool(client, "get_workflow", limit === undefined ? { query } : { query, limit });
  if (outcome.isError) throw new Error(outcome.text);
  const results = (outcome.structured.results ?? []) as Hit[];
  return { text: outcome.text, results, files: results.filter((r) => r.kind === "file") };
};
const described = (hits: Hit[]) => hits.map((h) => `${h.task_name}: ${h.status} ${h.path}`);

describe("get_workflow {query} by file path", () => {
  let acme: Client;
  let tax: { workflow_id: string; ids: string[] };
  let refactor: { workflow_id: string; ids: string[] };

  beforeAll(async () => {
    acme = await connect(workerTarget(TOKENS.acme));
    const globex = await connect(workerTarget(TOKENS.globex));
    // Another account with the very same paths, recorded first and last.
    await record(globex, "Globex billing", [{ name: "Globex tax", changes: [added("src/billing/tax.ts")] }]);
    tax = await record(acme, "Tax engine", [
      {
        name: "Add VAT",
        changes: [added("src/billing/tax.ts"), added("src/billing/rates.json")],
        decision: "Keep src/billing/tax.ts pure?",
      },
      { name: "Fix rounding", changes: [modified("src/billing/tax.ts"), added("src/billing/taxes.ts")] },
    ]);
    refactor = await record(acme, "Billing refactor", [
      { name: "Split billing", changes: [modified("src/billing.ts"), deleted("src/billing/rates.json")] },
      { name: "Odd names", changes: [added("docs/my notes.md"), added("/assets/caf%E9.txt")] },
    ]);
    await record(globex, "Globex odd", [{ name: "Globex notes", changes: [added("docs/my notes.md"), added("/assets/caf%E9.txt")] }]);
  });

  it("finds every task that touched an exact path, across workflows, most recent first", async () => {
    const { files, text } = await search(acme, "src/billing/tax.ts");
    expect(described(files)).toEqual(["Fix rounding: M src/billing/tax.ts", "Add VAT: A src/billing/tax.ts"]);
    expect(files[0]).toEqual({
      kind: "file",
      workflow_id: tax.workflow_id,
      task_id: tax.ids[1],
      task_name: "Fix rounding",
      path: "src/billing/tax.ts",
      status: "M",
      at: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
    });
    expect(Date.parse(files[0]?.at ?? "")).toBeGreaterThan(Date.parse(files[1]?.at ?? ""));
    expect(text.split("\n")[0]).toBe(`file src/billing/tax.ts M by ${tax.ids[1]} "Fix rounding" (${tax.workflow_id}) ${files[0]?.at}`);
  });

  it("puts file hits before word hits: a decision that names the path still comes, after them", async () => {
    const { results } = await search(acme, "src/billing/tax.ts", 20);
    expect(results.slice(0, 2).every((r) => r.kind === "file")).toBe(true);
    expect(results.slice(2).map((r) => r.kind)).toContain("decision");
  });

  it.each([
    // query, what it finds (newest first)
    ["src/billing/tax.ts", ["Fix rounding: M src/billing/tax.ts", "Add VAT: A src/billing/tax.ts"]],
    // A folder finds what is under it, never src/billing.ts next to it; with or without the slash.
    [
      "src/billing",
      ["Split billing: D src/billing/rates.json", "Fix rounding: M src/billing/tax.ts", "Fix rounding: A src/billing/taxes.ts"],
    ],
    [
      "src/billing/",
      ["Split billing: D src/billing/rates.json", "Fix rounding: M src/billing/tax.ts", "Fix rounding: A src/billing/taxes.ts"],
    ],
    // A trailing * is a name prefix.
    ["src/billing/tax*", ["Fix rounding: M src/billing/tax.ts", "Fix rounding: A src/billing/taxes.ts", "Add VAT: A src/billing/tax.ts"]],
    ["src/billing*", ["Split billing: M src/billing.ts", "Split billing: D src/billing/rates.json", "Fix rounding: M src/billing/tax.ts"]],
    ["./src/billing.ts", ["Split billing: M src/billing.ts"]],
    ["src/billing/tax", []],
    // Spaces need the explicit form; a name that is not UTF-8 in its escaped or displayed form.
    ["path:docs/my notes.md", ["Odd names: A docs/my notes.md"]],
    ["/assets/caf%E9.txt", ["Odd names: A /assets/caf%E9.txt"]],
    ["assets/caf\\xE9.txt", ["Odd names: A /assets/caf%E9.txt"]],
    ["assets/", ["Odd names: A /assets/caf%E9.txt"]],
  ])("%s", async (query, expected) => {
    const { files } = await search(acme, query, 20);
    expect(described(files).slice(0, expected.length)).toEqual(expected);
    if (expected.length < 3) expect(files).toHaveLength(expected.length);
  });

  it("never shows another account's paths", async () => {
    for (const query of ["src/billing/tax.ts", "src/", "path:docs/my notes.md", "/assets/caf%E9.txt", "path:src*"]) {
      const { files } = await search(acme, query, 20);
      expect(files.length).toBeGreaterThan(0);
      for (const file of files) expect([tax.workflow_id, refactor.workflow_id]).toContain(file.workflow_id);
    }
    const globex = await connect(workerTarget(TOKENS.globex));
    const { files } = await search(globex, "src/billing/tax.ts");
    expect(described(files)).toEqual(["Globex tax: A src/billing/tax.ts"]);
  });

  it("bounds results by limit, file hits first", async () => {
    const { results } = await search(acme, "src/", 2);
    expect(results).toHaveLength(2);
    expect(results.map((r) => r.kind)).toEqual(["file", "file"]);
  });

  it("leaves word queries to the memory search", async () => {
    const { files, results } = await search(acme, "rounding");
    expect(files).toEqual([]);
    expect(results.map((r) => r.kind)).toContain("task");
  });
});
