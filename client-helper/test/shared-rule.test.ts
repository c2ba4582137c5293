import type { Changes, DirtyEntry, FileState, Snapshot } from "@waymark/protocol/wire";
import { describe, expect, it } from "vitest";
import { changeStatus as edgeChangeStatus, computeNetChanges as edgeNetChanges, summarizeChanges } from "../../src/domain/changes.js";
import { resolveChanges } from "../src/cli.js";

// The helper shows people the list the edge will record: both must come from one rule. Each
// row goes through the helper's resolution and the edge's, and both must agree with the row.

const state = (mode: string, blob: string): FileState => ({ mode, blob: blob.repeat(40).slice(0, 40) });
const v1 = state("100644", "1");
const v2 = state("100644", "2");
const exec1 = state("100755", "1");
const link1 = state("120000", "1");
const HEAD = "a".repeat(40);
const NEXT = "b".repeat(40);

const git = (dirty: DirtyEntry[]): Snapshot => ({
  type: "git",
  head: HEAD,
  dirty,
});

describe("helper and edge classify one table identically", () => {
  it.each([
    { case: "same state", before: v1, after: v1, status: null },
    { case: "created", before: null, after: v1, status: "A" },
    { case: "deleted", before: v1, after: null, status: "D" },
    { case: "content changed", before: v1, after: v2, status: "M" },
    { case: "chmod +x", before: v1, after: exec1, status: "M" },
    { case: "file turned into a symlink", before: v1, after: link1, status: "M" },
    { case: "absent both times", before: null, after: null, status: null },
  ])("$case → $status", ({ before, after, status }) => {
    const snapshot: Snapshot = { type: "checksum", files: 0, digest: "" };
    const changes: Changes = { type: "checksum", transitions: [{ path: "f", before, after }] };
    expect(edgeChangeStatus(before, after)).toBe(status);
    const helper = resolveChanges(snapshot, changes).files.map((f) => f.status);
    const edge = edgeNetChanges(snapshot, changes).map((f) => f.status);
    expect(helper).toEqual(edge);
    expect(helper).toEqual(status === null ? [] : [status]);
  });

  it.each<{ case: string; snapshot: Snapshot; changes: Changes; expected: [string, string, boolean][] }>([
    {
      case: "dirty at start, untouched",
      snapshot: git([{ path: "a", head: v1, worktree: v2 }]),
      changes: { type: "git", start_head: HEAD, head: HEAD, committed: [], dirty: [{ path: "a", head: v1, worktree: v2 }] },
      expected: [],
    },
    {
      case: "dirty at start, committed as is",
      snapshot: git([{ path: "a", head: v1, worktree: v2 }]),
      changes: { type: "git", start_head: HEAD, head: NEXT, committed: [{ path: "a", before: v1, after: v2 }], dirty: [] },
      expected: [],
    },
    {
      case: "untracked at start, deleted",
      snapshot: git([{ path: "u", head: null, worktree: v1 }]),
      changes: { type: "git", start_head: HEAD, head: HEAD, committed: [], dirty: [] },
      expected: [["u", "D", false]],
    },
    {
      case: "added and committed",
      snapshot: git([]),
      changes: { type: "git", start_head: HEAD, head: NEXT, committed: [{ path: "n", before: null, after: v1 }], dirty: [] },
      expected: [["n", "A", true]],
    },
    {
      case: "committed then edited again",
      snapshot: git([]),
      changes: {
        type: "git",
        start_head: HEAD,
        head: NEXT,
        committed: [{ path: "n", before: null, after: v1 }],
        dirty: [{ path: "n", head: v1, worktree: v2 }],
      },
      expected: [["n", "A", false]],
    },
    {
      case: "resolved by the helper (net), for a summarised git snapshot",
      snapshot: { type: "git", head: HEAD, dirty: [], dirty_omitted: 30_000 },
      changes: {
        type: "net",
        transitions: [
          { path: "x", before: null, after: v1, committed: true },
          { path: "y", before: v1, after: v1 },
        ],
      },
      expected: [["x", "A", true]],
    },
    {
      case: "the helper could not observe",
      snapshot: git([]),
      changes: { type: "unavailable", reason: "start commit is gone" },
      expected: [],
    },
  ])("$case", ({ snapshot, changes, expected }) => {
    const helper = resolveChanges(snapshot, changes);
    const edge = edgeNetChanges(snapshot, changes);
    expect(helper.files).toEqual(edge);
    expect(helper).toMatchObject(summarizeChanges(edge));
    expect(edge.map((c) => [c.path, c.status, c.committed])).toEqual(expected);
  });
});
