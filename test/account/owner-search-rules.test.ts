import { describe, expect, it } from "vitest";
import type { MemoryHit } from "../../src/account/memory";
import { combineSearches, type Found, PATHS_SHOWN_PER_ROW, pageWindow, pathMatches, textMatches } from "../../src/account/owner-search";
import type { PathHit } from "../../src/account/path-index";

/** The owner view's pure rules: how searches narrow the dashboard, and which page is shown. */
describe("the dashboard's page window", () => {
  it.each([
    // total, requested page, size → page, pages, offset
    [0, undefined, 25, 0, 1, 0],
    [0, 3, 25, 0, 1, 0],
    [25, 0, 25, 0, 1, 0],
    [26, 1, 25, 1, 2, 25],
    [26, 9, 25, 1, 2, 25],
    [100, -4, 25, 0, 4, 0],
    [100, 2.7, 25, 2, 4, 50],
  ])("%i rows, page %s of %i per page → page %i of %i (offset %i)", (total, requested, size, page, pages, offset) => {
    expect(pageWindow(total, requested, size)).toEqual({ page, pages, offset });
  });
});

const memoryHit = (workflow_id: string, text: string): MemoryHit => ({
  kind: "task",
  id: `tk_${text}`,
  workflow_id,
  task_id: null,
  text,
  at: "",
});
const pathHit = (workflow_id: string, path: string): PathHit => ({
  workflow_id,
  path,
  task_id: "tk_1",
  task_name: "T",
  status: "M",
  at: "",
});

describe("combining searches", () => {
  const text: Found = new Map([
    ["wf_a", { text: "a" }],
    ["wf_b", { text: "b" }],
  ]);
  const paths: Found = new Map([
    ["wf_b", { paths: [{ path: "x", task_id: "tk_1", task_name: "T", status: "M" }] }],
    ["wf_c", { paths: [] }],
  ]);

  it.each([
    ["no search: no narrowing", [], null],
    ["one search: what it found", [text], ["wf_a", "wf_b"]],
    ["two searches: what both found", [text, paths], ["wf_b"]],
    ["a search that found nothing: nothing", [text, new Map()], []],
  ])("%s", (_name, searches, ids) => {
    expect(combineSearches(searches).ids).toEqual(ids);
  });

  it("keeps every search's reason for a workflow", () => {
    expect(combineSearches([text, paths]).matches.get("wf_b")).toEqual({
      text: "b",
      paths: [{ path: "x", task_id: "tk_1", task_name: "T", status: "M" }],
    });
  });

  it("a workflow's best text hit is its first one", () => {
    expect(textMatches([memoryHit("wf_a", "best"), memoryHit("wf_a", "worse"), memoryHit("wf_b", "other")])).toEqual(
      new Map([
        ["wf_a", { text: "best" }],
        ["wf_b", { text: "other" }],
      ]),
    );
  });

  it(`a row shows at most ${PATHS_SHOWN_PER_ROW} of the paths that matched, in the order found`, () => {
    const hits = Array.from({ length: 8 }, (_, i) => pathHit("wf_a", `f${i}`));
    const shown = pathMatches([...hits, pathHit("wf_b", "g")]);
    expect(shown.get("wf_a")?.paths?.map((p) => p.path)).toEqual(["f0", "f1", "f2", "f3", "f4"]);
    expect(shown.get("wf_b")?.paths?.map((p) => p.path)).toEqual(["g"]);
  });
});
