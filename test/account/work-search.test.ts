import { describe, expect, it } from "vitest";
import type { MemoryHit } from "../../src/account/memory";
import { escapedPrefix, type PathHit } from "../../src/account/path-index";
import { mergeHits, pathQuery } from "../../src/account/work-search";

/** How get_workflow's query is read as a path, and how file hits and word hits are merged. */
describe("a query read as a path", () => {
  it.each([
    // query, path (null: words only), name prefix, explicit
    ["src/billing/tax.ts", "src/billing/tax.ts", false, false],
    ["  src/billing/tax.ts ", "src/billing/tax.ts", false, false],
    ["tax.ts", "tax.ts", false, false],
    [".gitignore", ".gitignore", false, false],
    ["src/billing/", "src/billing", false, false],
    ["src/billing//", "src/billing", false, false],
    ["src/billing/*", "src/billing/", true, false],
    ["src/bill**", "src/bill", true, false],
    ["./src/a.ts", "src/a.ts", false, false],
    ["/src/a.ts", "src/a.ts", false, false],
    ["path:docs/my notes.md", "docs/my notes.md", false, true],
    ["PATH: README", "README", false, true],
    ["path:src*", "src", true, true],
    ["/src/caf%E9.txt", "/src/caf%E9.txt", false, false],
    ["src/caf\\xE9.txt", "/src/caf%E9.txt", false, false],
    ["src/caf\\xe9.txt", "/src/caf%E9.txt", false, false],
    ["src/caf\\xC3\\xA9.txt", "src/café.txt", false, false],
    // \x below 0x80 is never how a byte is shown: a real backslash in the name.
    ["src/a\\x41.ts", "src/a\\x41.ts", false, false],
    ["payments library", null, false, false],
    ["rounding", null, false, false],
    ["v1.2", null, false, false],
    ["how do I fix src/a.ts", null, false, false],
    ["path:", null, false, false],
    ["/", null, false, false],
  ])("%j → %j", (query, path, prefix, explicit) => {
    expect(pathQuery(query)).toEqual(path === null ? null : { path, prefix, explicit });
  });
});

describe("the escaped range under a prefix", () => {
  it.each([
    ["src/", "/src/"],
    ["a b%", "/a b%25"],
    ["café/", "/caf%C3%A9/"],
  ])("%j → %j", (prefix, escaped) => {
    expect(escapedPrefix(prefix)).toBe(escaped);
  });
});

const file = (path: string): PathHit => ({ path, workflow_id: "wf_a", task_id: "tk_a", task_name: "T", status: "M", at: "t" });
const word = (id: string): MemoryHit => ({ kind: "decision", id, workflow_id: "wf_a", task_id: null, text: id, at: "t" });

describe("merging file and word hits", () => {
  it.each([
    [[], [], 5, []],
    [["a", "b"], ["x", "y"], 5, ["a", "b", "x", "y"]],
    [["a", "b"], ["x", "y"], 3, ["a", "b", "x"]],
    [["a", "b", "c"], ["x"], 2, ["a", "b"]],
    [[], ["x", "y"], 1, ["x"]],
  ])("files %j, words %j, limit %i → %j", (files, words, limit, expected) => {
    const merged = mergeHits(files.map(file), words.map(word), limit);
    expect(merged.map((hit) => (hit.kind === "file" ? hit.path : hit.id))).toEqual(expected);
  });

  it("a file hit carries the workflow, the task and when", () => {
    expect(mergeHits([file("a")], [], 1)).toEqual([
      { kind: "file", path: "a", workflow_id: "wf_a", task_id: "tk_a", task_name: "T", status: "M", at: "t" },
    ]);
  });
});
