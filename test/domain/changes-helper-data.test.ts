import { limitChanges } from "@waymark/protocol/truncation";
import { describe, expect, it } from "vitest";
import { attributeHelperData, type ChangeStatus, computeNetChanges, summarizeChanges, truncationOf } from "../../src/domain/changes";

type Entry = { path: string; status: ChangeStatus };
const entries = (paths: string[], status: ChangeStatus = "A"): Entry[] => paths.map((path) => ({ path, status }));
const size = () => 10;

describe("limitChanges: lists within the helper's ceilings, the rest counted per directory", () => {
  it.each([
    {
      case: "under both ceilings: all listed, no marker",
      paths: ["a", "b/c"],
      maxBytes: 100,
      maxEntries: 10,
      listed: 2,
      truncated: undefined,
    },
    {
      case: "cut by entries",
      paths: ["a", "b/c", "b/d", "e/f/g"],
      maxBytes: 1000,
      maxEntries: 2,
      listed: 2,
      truncated: {
        omitted: 2,
        other: 0,
        directories: [
          { path: "b", added: 1, modified: 0, deleted: 0 },
          { path: "e/f", added: 1, modified: 0, deleted: 0 },
        ],
      },
    },
    {
      case: "cut by bytes",
      paths: ["a", "b", "c"],
      maxBytes: 25,
      maxEntries: 10,
      listed: 2,
      truncated: { omitted: 1, other: 0, directories: [{ path: "", added: 1, modified: 0, deleted: 0 }] },
    },
    {
      case: "a name that is not UTF-8 keeps a valid directory name",
      paths: ["x", "/caf%E9/y", "/d%C3%A9j%C3%A0/%FF"],
      maxBytes: 1000,
      maxEntries: 1,
      listed: 1,
      truncated: {
        omitted: 2,
        other: 0,
        directories: [
          { path: "/caf%E9", added: 1, modified: 0, deleted: 0 },
          { path: "déjà", added: 1, modified: 0, deleted: 0 },
        ],
      },
    },
  ])("$case", ({ paths, maxBytes, maxEntries, listed, truncated }) => {
    const result = limitChanges(entries(paths), size, maxBytes, maxEntries);
    expect(result.listed).toHaveLength(listed);
    expect(result.truncated).toEqual(truncated);
  });

  it("many directories: the deepest level that names at most 200, the rest in other", () => {
    const paths = Array.from({ length: 300 }, (_, i) => `top${i}/file`);
    const { truncated } = limitChanges(entries(["first", ...paths], "D"), size, 1000, 1);
    expect(truncated?.omitted).toBe(300);
    expect(truncated?.directories).toHaveLength(200);
    expect(truncated?.other).toBe(100);
    expect(truncated?.directories.every((d) => d.deleted === 1)).toBe(true);
  });
});

describe("the truncated marker reaches files_changed", () => {
  it("net changes with a summary: listed files plus the marker as sent", () => {
    const state = { mode: "100644", blob: "1".repeat(40) };
    const truncated = { omitted: 5, other: 0, directories: [{ path: "build", added: 5, modified: 0, deleted: 0 }] };
    const changes = { type: "net" as const, transitions: [{ path: "a.ts", before: null, after: state, committed: true }], truncated };
    const files = computeNetChanges({ type: "checksum", files: 0, digest: "" }, changes);
    expect(summarizeChanges(files, truncationOf(changes))).toEqual({
      added: ["a.ts"],
      modified: [],
      deleted: [],
      renamed: [],
      uncommitted: [],
      truncated,
    });
  });
});

describe("attributeHelperData: the edge's reading of what the helper sent", () => {
  const state = { mode: "100644", blob: "2".repeat(40) };
  const git = { type: "git" as const, head: "a".repeat(40), dirty: [] };
  it.each([
    { case: "no helper data at all", snapshot: git, changes: undefined, paths: [], warning: /without helper data/ },
    {
      case: "the helper could not observe: its reason, never 'without helper data'",
      snapshot: git,
      changes: { type: "unavailable" as const, reason: "the start commit is gone" },
      paths: [],
      warning: /^the start commit is gone$/,
    },
    {
      case: "net changes for a task started without a snapshot",
      snapshot: null,
      changes: { type: "net" as const, transitions: [{ path: "x", before: null, after: state }] },
      paths: ["x"],
      warning: undefined,
    },
    {
      case: "a concurrent task on the same working tree becomes a warning",
      snapshot: git,
      changes: {
        type: "git" as const,
        start_head: "a".repeat(40),
        head: "a".repeat(40),
        committed: [],
        dirty: [],
        concurrent: [{ task_id: "tk_other", started_at: 0, completed_at: null }],
      },
      paths: [],
      warning: /Task tk_other was also open on this working tree/,
    },
  ])("$case", ({ snapshot, changes, paths, warning }) => {
    const result = attributeHelperData(snapshot, changes);
    expect(result.changes.map((c) => c.path)).toEqual(paths);
    if (warning) expect(result.warnings.join("\n")).toMatch(warning);
    else expect(result.warnings).toEqual([]);
    if (changes) expect(result.warnings.join("\n")).not.toMatch(/without helper data/);
  });

  it("git changes without a start snapshot are refused, naming the field", () => {
    const changes = { type: "git" as const, start_head: null, head: null, committed: [], dirty: [] };
    expect(() => attributeHelperData(null, changes)).toThrow(/^changes: git changes need the git snapshot/);
  });
});
