import type { PolicyTask } from "@waymark/protocol/policy";
import type { DirtyEntry, FileState, GitChanges, GitSnapshot, PathChange, Transition } from "../../src/domain/changes";

/**
 * A realistic, deterministic 40-hex id for a label (FNV-1a, five seeds). Not git's real SHA-1:
 * the domain only compares ids, and readable labels keep the tables legible.
 */
export function objectId(label: string): string {
  let id = "";
  for (let seed = 0; seed < 5; seed++) {
    let hash = (0x811c9dc5 ^ (seed * 0x9e3779b9)) >>> 0;
    for (const character of `${seed}:${label}`) {
      hash ^= character.codePointAt(0) ?? 0;
      hash = Math.imul(hash, 0x01000193) >>> 0;
    }
    id += hash.toString(16).padStart(8, "0");
  }
  return id;
}

const stateWithMode =
  (mode: string) =>
  (content: string): FileState => ({ mode, blob: objectId(`blob ${content}`) });
export const file = stateWithMode("100644");
export const executable = stateWithMode("100755");
/** A symlink's blob is the hash of its target string. */
export const symlink = stateWithMode("120000");
export const submodule = (commit: string): FileState => ({
  mode: "160000",
  blob: objectId(`commit ${commit}`),
});
/** git's real id of the empty blob, which every empty file shares. */
export const emptyFile: FileState = {
  mode: "100644",
  blob: "e69de29bb2d1d6434b8b29ae775ad8c2e48c5391",
};

export const START_HEAD = objectId("commit start");
export const END_HEAD = objectId("commit end");

/** One line of `git status` (state in HEAD, state on disk). */
export const dirty = (path: string, head: FileState | null, worktree: FileState | null): DirtyEntry => ({ path, head, worktree });

/** One line of `git diff --raw start_head HEAD`. */
export const commit = (path: string, before: FileState | null, after: FileState | null): Transition => ({ path, before, after });

export interface GitObservations {
  startHead?: string | null;
  endHead?: string | null;
  startDirty?: DirtyEntry[];
  committed?: Transition[];
  endDirty?: DirtyEntry[];
}

export function gitObservations({ startHead = START_HEAD, endHead, startDirty = [], committed = [], endDirty = [] }: GitObservations): {
  snapshot: GitSnapshot;
  changes: GitChanges;
} {
  return {
    snapshot: {
      type: "git",
      head: startHead,
      branch: "main",
      dirty: startDirty,
    },
    changes: {
      type: "git",
      start_head: startHead,
      head: endHead ?? (committed.length > 0 ? END_HEAD : startHead),
      committed,
      dirty: endDirty,
    },
  };
}

export const change = (
  path: string,
  status: PathChange["status"],
  before: FileState | null,
  after: FileState | null,
  committed = false,
): PathChange => ({ path, status, before, after, committed });

/** A pull-request task's facts that satisfy every policy rule (`waymark ci`'s policy and rollup tables change one thing each). */
export function policyTask(id: string, over: Partial<PolicyTask> = {}): PolicyTask {
  return {
    workflow_id: "wf_aaaaaaaaaaaaaaaaaaaa",
    id,
    name: `Task ${id}`,
    status: "success",
    agent: "claude-code",
    model: "anthropic/claude-sonnet-4-5",
    cost_usd: 0.01,
    files: ["src/a.ts"],
    outside_areas: [],
    lines: { agent: 5, others: 5, not_observed: 0 },
    file_authors: [{ path: "src/a.ts", agent: 5, others: 5, not_observed: 0 }],
    tests: "passed",
    test_run: { command: "npm test", at: "2026-11-27T14:05:00.000Z", exit_code: 0 },
    figures: "signed",
    usage_signed: true,
    open_reviews: [],
    feedback: [],
    record: { problems: [] },
    ...over,
  };
}
