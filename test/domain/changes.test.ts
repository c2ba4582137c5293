import { describe, expect, it } from "vitest";
import {
  type ChangeStatus,
  type Changes,
  ChangesMismatchError,
  computeNetChanges,
  type FilesChanged,
  type PathChange,
  type Snapshot,
  summarizeChanges,
} from "../../src/domain/changes";
import {
  change,
  commit,
  dirty,
  emptyFile,
  executable,
  file,
  type GitObservations,
  gitObservations,
  objectId,
  START_HEAD,
  submodule,
  symlink,
} from "./fixtures";

type Listed = readonly [ChangeStatus, string, "committed" | "uncommitted"];

function listed(changes: readonly PathChange[]): Listed[] {
  return changes.map((each) => [each.status, each.path, each.committed ? "committed" : "uncommitted"]);
}

function attribute(observations: GitObservations): Listed[] {
  const { snapshot, changes } = gitObservations(observations);
  return listed(computeNetChanges(snapshot, changes));
}

// One row per row of DESIGN.md's attribution table (several per row where git can get there
// in several ways). The index is not part of the state, so "staged" and "unstaged" reach the
// edge as the same observation: what is on disk differs from HEAD.
const attributionTable: {
  situation: string;
  observations: GitObservations;
  expected: Listed[];
}[] = [
  {
    situation: "tracked file modified and committed",
    observations: {
      committed: [commit("src/app.ts", file("app v1"), file("app v2"))],
    },
    expected: [["M", "src/app.ts", "committed"]],
  },
  {
    situation: "tracked file modified and staged",
    observations: {
      endDirty: [dirty("src/app.ts", file("app v1"), file("app v2"))],
    },
    expected: [["M", "src/app.ts", "uncommitted"]],
  },
  {
    situation: "tracked file modified, not staged",
    observations: {
      endDirty: [dirty("README.md", file("readme v1"), file("readme v2"))],
    },
    expected: [["M", "README.md", "uncommitted"]],
  },
  {
    situation: "tracked file modified, partly committed, rest left in the worktree",
    observations: {
      committed: [commit("src/app.ts", file("app v1"), file("app v2"))],
      endDirty: [dirty("src/app.ts", file("app v2"), file("app v3"))],
    },
    expected: [["M", "src/app.ts", "uncommitted"]],
  },
  {
    situation: "new file committed",
    observations: {
      committed: [commit("src/new.ts", null, file("new"))],
    },
    expected: [["A", "src/new.ts", "committed"]],
  },
  {
    situation: "new file staged",
    observations: { endDirty: [dirty("src/new.ts", null, file("new"))] },
    expected: [["A", "src/new.ts", "uncommitted"]],
  },
  {
    situation: "new file untracked (not ignored)",
    observations: { endDirty: [dirty("notes/todo.txt", null, file("todo"))] },
    expected: [["A", "notes/todo.txt", "uncommitted"]],
  },
  {
    situation: "file deleted and committed",
    observations: {
      committed: [commit("src/old-jwt.ts", file("jwt"), null)],
    },
    expected: [["D", "src/old-jwt.ts", "committed"]],
  },
  {
    situation: "file just removed from disk",
    observations: { endDirty: [dirty("src/old-jwt.ts", file("jwt"), null)] },
    expected: [["D", "src/old-jwt.ts", "uncommitted"]],
  },
  {
    situation: "file renamed and committed (D old + A new)",
    observations: {
      committed: [commit("src/utils.ts", file("utils"), null), commit("src/lib/utils.ts", null, file("utils"))],
    },
    expected: [
      ["A", "src/lib/utils.ts", "committed"],
      ["D", "src/utils.ts", "committed"],
    ],
  },
  {
    situation: "file renamed in the worktree (git mv, not committed)",
    observations: {
      endDirty: [dirty("src/utils.ts", file("utils"), null), dirty("src/lib/utils.ts", null, file("utils"))],
    },
    expected: [
      ["A", "src/lib/utils.ts", "uncommitted"],
      ["D", "src/utils.ts", "uncommitted"],
    ],
  },
  {
    situation: "file added then deleted in the worktree (never observed: inputs empty)",
    observations: {},
    expected: [],
  },
  {
    situation: "file added and committed, then deleted from disk",
    observations: {
      committed: [commit("tmp/scratch.ts", null, file("scratch"))],
      endDirty: [dirty("tmp/scratch.ts", file("scratch"), null)],
    },
    expected: [],
  },
  {
    situation: "file modified then reverted in the worktree (inputs empty)",
    observations: {},
    expected: [],
  },
  {
    situation: "file modified and committed, then reverted by another commit",
    observations: { endHead: objectId("commit revert") },
    expected: [],
  },
  {
    situation: "file modified and committed, then reverted in the worktree",
    observations: {
      committed: [commit("src/app.ts", file("app v1"), file("app v2"))],
      endDirty: [dirty("src/app.ts", file("app v2"), file("app v1"))],
    },
    expected: [],
  },
  {
    situation: "file already modified at start, untouched",
    observations: {
      startDirty: [dirty("src/wip.ts", file("wip v1"), file("wip v2"))],
      endDirty: [dirty("src/wip.ts", file("wip v1"), file("wip v2"))],
    },
    expected: [],
  },
  {
    situation: "file already untracked at start, untouched",
    observations: {
      startDirty: [dirty("scratch.txt", null, file("scratch"))],
      endDirty: [dirty("scratch.txt", null, file("scratch"))],
    },
    expected: [],
  },
  {
    situation: "file already deleted at start, untouched",
    observations: {
      startDirty: [dirty("gone.txt", file("gone"), null)],
      endDirty: [dirty("gone.txt", file("gone"), null)],
    },
    expected: [],
  },
  {
    situation: "file already dirty at start and changed further",
    observations: {
      startDirty: [dirty("src/wip.ts", file("wip v1"), file("wip v2"))],
      endDirty: [dirty("src/wip.ts", file("wip v1"), file("wip v3"))],
    },
    expected: [["M", "src/wip.ts", "uncommitted"]],
  },
  {
    situation: "file already untracked at start and changed further",
    observations: {
      startDirty: [dirty("scratch.txt", null, file("scratch v1"))],
      endDirty: [dirty("scratch.txt", null, file("scratch v2"))],
    },
    expected: [["M", "scratch.txt", "uncommitted"]],
  },
  {
    situation: "file already dirty at start, committed as it was",
    observations: {
      startDirty: [dirty("src/wip.ts", file("wip v1"), file("wip v2"))],
      committed: [commit("src/wip.ts", file("wip v1"), file("wip v2"))],
    },
    expected: [],
  },
  {
    situation: "file already untracked at start, committed as it was",
    observations: {
      startDirty: [dirty("scratch.txt", null, file("scratch"))],
      committed: [commit("scratch.txt", null, file("scratch"))],
    },
    expected: [],
  },
  {
    situation: "file already dirty at start, changed further and committed",
    observations: {
      startDirty: [dirty("src/wip.ts", file("wip v1"), file("wip v2"))],
      committed: [commit("src/wip.ts", file("wip v1"), file("wip v3"))],
    },
    expected: [["M", "src/wip.ts", "committed"]],
  },
  {
    situation: "file already dirty at start, restored to HEAD (git restore: nothing was committed)",
    observations: {
      startDirty: [dirty("src/wip.ts", file("wip v1"), file("wip v2"))],
    },
    expected: [["M", "src/wip.ts", "uncommitted"]],
  },
  {
    situation: "file already untracked at start, deleted (nothing was committed)",
    observations: {
      startDirty: [dirty("scratch.txt", null, file("scratch"))],
    },
    expected: [["D", "scratch.txt", "uncommitted"]],
  },
  {
    situation: "file added and committed, then edited again",
    observations: {
      committed: [commit("src/new.ts", null, file("new v1"))],
      endDirty: [dirty("src/new.ts", file("new v1"), file("new v2"))],
    },
    expected: [["A", "src/new.ts", "uncommitted"]],
  },
  {
    situation: "file added and staged, then edited again",
    observations: { endDirty: [dirty("src/new.ts", null, file("new v2"))] },
    expected: [["A", "src/new.ts", "uncommitted"]],
  },
  {
    situation: "file added, committed, edited again and committed again",
    observations: {
      committed: [commit("src/new.ts", null, file("new v2"))],
    },
    expected: [["A", "src/new.ts", "committed"]],
  },
  {
    situation: "chmod +x, committed",
    observations: {
      committed: [commit("scripts/build.sh", file("#!/bin/sh"), executable("#!/bin/sh"))],
    },
    expected: [["M", "scripts/build.sh", "committed"]],
  },
  {
    situation: "chmod +x, not committed",
    observations: {
      endDirty: [dirty("scripts/build.sh", file("#!/bin/sh"), executable("#!/bin/sh"))],
    },
    expected: [["M", "scripts/build.sh", "uncommitted"]],
  },
  {
    situation: "file turned into a symlink",
    observations: {
      endDirty: [dirty("config.json", file("{}"), symlink("config/dev.json"))],
    },
    expected: [["M", "config.json", "uncommitted"]],
  },
  {
    situation: "file turned into a symlink whose target string equals the old content",
    observations: {
      endDirty: [dirty("current", file("v2"), symlink("v2"))],
    },
    expected: [["M", "current", "uncommitted"]],
  },
  {
    situation: "submodule moved to another commit",
    observations: {
      committed: [commit("vendor/lib", submodule("lib c1"), submodule("lib c2"))],
    },
    expected: [["M", "vendor/lib", "committed"]],
  },
  {
    situation: "ignored dist/bundle.js changed too (status runs without --ignored: never in the inputs)",
    observations: {
      endDirty: [dirty("src/app.ts", file("app v1"), file("app v2"))],
    },
    expected: [["M", "src/app.ts", "uncommitted"]],
  },
  {
    situation: "weird names kept exactly, never in git's quoted form",
    observations: {
      committed: [commit("docs/naïve café.md", null, file("café")), commit('say "hi".txt', null, file("hi"))],
      endDirty: [
        dirty("line\nbreak.txt", null, file("newline")),
        dirty("tab\there\\back slash.txt", file("tab v1"), file("tab v2")),
        dirty("日本語/ファイル 😀.ts", file("jp"), null),
      ],
    },
    expected: [
      ["A", "docs/naïve café.md", "committed"],
      ["A", "line\nbreak.txt", "uncommitted"],
      ["A", 'say "hi".txt', "committed"],
      ["M", "tab\there\\back slash.txt", "uncommitted"],
      ["D", "日本語/ファイル 😀.ts", "uncommitted"],
    ],
  },
  {
    situation: "repository without any commit, files only in the worktree",
    observations: {
      startHead: null,
      startDirty: [dirty("index.js", null, file("index v1"))],
      endDirty: [dirty("index.js", null, file("index v2")), dirty("package.json", null, file("{}"))],
    },
    expected: [
      ["M", "index.js", "uncommitted"],
      ["A", "package.json", "uncommitted"],
    ],
  },
  {
    situation: "repository without any commit, first commit made by the task",
    observations: {
      startHead: null,
      startDirty: [dirty("index.js", null, file("index v1"))],
      committed: [commit("index.js", null, file("index v2")), commit("package.json", null, file("{}"))],
    },
    expected: [
      ["M", "index.js", "committed"],
      ["A", "package.json", "committed"],
    ],
  },
];

describe("computeNetChanges: DESIGN.md attribution table", () => {
  it.each(attributionTable)("$situation", ({ observations, expected }) => {
    expect(attribute(observations)).toEqual(expected);
  });

  it("resolves every situation at once, sorted by path", () => {
    // Rows reuse a few paths with different histories; the combined case needs one history
    // per path, so it takes each row's paths under a prefix of their own.
    const rows = attributionTable.filter((row) => row.observations.startHead !== null);
    const prefixed = rows.map((row, index) => {
      const prefix = `row${String(index).padStart(2, "0")}/`;
      const rename = <Entry extends { path: string }>(entries: Entry[] = []) =>
        entries.map((entry) => ({ ...entry, path: prefix + entry.path }));
      return {
        startDirty: rename(row.observations.startDirty),
        committed: rename(row.observations.committed),
        endDirty: rename(row.observations.endDirty),
        expected: row.expected.map(([status, path, committed]): Listed => [status, prefix + path, committed]),
      };
    });
    const combined = gitObservations({
      startDirty: prefixed.flatMap((row) => row.startDirty),
      committed: prefixed.flatMap((row) => row.committed),
      endDirty: prefixed.flatMap((row) => row.endDirty),
    });
    expect(listed(computeNetChanges(combined.snapshot, combined.changes))).toEqual(prefixed.flatMap((row) => row.expected));
  });
});

const checksumSnapshot: Snapshot = {
  type: "checksum",
  files: 1200,
  digest: objectId("checksum list"),
};

describe("computeNetChanges: not a git repository (checksum transitions)", () => {
  it.each([
    {
      situation: "added, modified and deleted files, sorted by path",
      transitions: [
        commit("new.txt", null, file("new")),
        commit("changed.txt", file("v1"), file("v2")),
        commit("removed.txt", file("removed"), null),
      ],
      expected: [
        change("changed.txt", "M", file("v1"), file("v2")),
        change("new.txt", "A", null, file("new")),
        change("removed.txt", "D", file("removed"), null),
      ],
    },
    {
      situation: "transition with equal states dropped",
      transitions: [commit("same.txt", file("same"), file("same"))],
      expected: [],
    },
    {
      situation: "transition from nothing to nothing dropped",
      transitions: [commit("ghost.txt", null, null)],
      expected: [],
    },
    {
      situation: "repeated identical transition counted once",
      transitions: [commit("twice.txt", null, file("twice")), commit("twice.txt", null, file("twice"))],
      expected: [change("twice.txt", "A", null, file("twice"))],
    },
  ])("$situation", ({ transitions, expected }) => {
    expect(computeNetChanges(checksumSnapshot, { type: "checksum", transitions })).toEqual(expected);
  });
});

describe("computeNetChanges: observations that do not fit together", () => {
  const { snapshot: gitSnapshot, changes: gitChanges } = gitObservations({});
  const checksumChanges: Changes = { type: "checksum", transitions: [] };
  it.each([
    {
      situation: "git snapshot, checksum changes",
      snapshot: gitSnapshot,
      changes: checksumChanges,
      message: 'changes.type: must match the start snapshot\'s type ("git"), got "checksum"',
    },
    {
      situation: "checksum snapshot, git changes",
      snapshot: checksumSnapshot,
      changes: gitChanges,
      message: 'changes.type: must match the start snapshot\'s type ("checksum"), got "git"',
    },
    {
      situation: "start_head is not the snapshot's head",
      snapshot: gitSnapshot,
      changes: { ...gitChanges, start_head: objectId("commit elsewhere") },
      message: `changes.start_head: must equal the start snapshot's head (${START_HEAD}), got ${objectId("commit elsewhere")}`,
    },
    {
      situation: "start_head given although the repository had no commit",
      snapshot: { ...gitSnapshot, head: null },
      changes: gitChanges,
      message: `changes.start_head: must equal the start snapshot's head (null), got ${START_HEAD}`,
    },
    {
      situation: "a path listed twice with different states",
      snapshot: gitSnapshot,
      changes: {
        ...gitChanges,
        dirty: [dirty("a.ts", file("a v1"), file("a v2")), dirty("b.ts", file("b v1"), null), dirty("a.ts", file("a v1"), file("a v3"))],
      },
      message: 'changes.dirty[2].path: "a.ts" is listed again with different states',
    },
    {
      situation: "a commit transition listed twice with different states",
      snapshot: gitSnapshot,
      changes: {
        ...gitChanges,
        committed: [commit("a.ts", null, file("a")), commit("a.ts", null, executable("a"))],
      },
      message: 'changes.committed[1].path: "a.ts" is listed again with different states',
    },
  ])("$situation", ({ snapshot, changes, message }) => {
    expect(() => computeNetChanges(snapshot, changes)).toThrow(new ChangesMismatchError(message));
    expect(() => computeNetChanges(snapshot, changes)).toThrow(ChangesMismatchError);
  });

  it("accepts a path listed twice with the same states", () => {
    const { snapshot, changes } = gitObservations({
      startDirty: [dirty("a.ts", file("a v1"), file("a v2")), dirty("a.ts", file("a v1"), file("a v2"))],
    });
    expect(listed(computeNetChanges(snapshot, changes))).toEqual([["M", "a.ts", "uncommitted"]]);
  });
});

const noChanges: FilesChanged = {
  added: [],
  modified: [],
  deleted: [],
  renamed: [],
  uncommitted: [],
};

describe("summarizeChanges", () => {
  it.each([
    { situation: "nothing changed", changes: [], expected: noChanges },
    {
      situation: "reference fields sorted, uncommitted listed",
      changes: [
        change("src/z.ts", "A", null, file("z"), true),
        change("package.json", "M", file("p1"), file("p2")),
        change("src/a.ts", "A", null, file("a")),
        change("src/old-jwt.ts", "D", file("jwt"), null, true),
        change("prisma/schema.prisma", "M", file("s1"), file("s2"), true),
      ],
      expected: {
        ...noChanges,
        added: ["src/a.ts", "src/z.ts"],
        modified: ["package.json", "prisma/schema.prisma"],
        deleted: ["src/old-jwt.ts"],
        uncommitted: ["package.json", "src/a.ts"],
      },
    },
    {
      situation: "rename paired, both paths kept in deleted and added",
      changes: [change("src/lib/utils.ts", "A", null, file("utils"), true), change("src/utils.ts", "D", file("utils"), null, true)],
      expected: {
        ...noChanges,
        added: ["src/lib/utils.ts"],
        deleted: ["src/utils.ts"],
        renamed: [{ from: "src/utils.ts", to: "src/lib/utils.ts" }],
      },
    },
    {
      situation: "rename with chmod +x still paired",
      changes: [change("build.sh", "D", file("#!/bin/sh"), null), change("scripts/build.sh", "A", null, executable("#!/bin/sh"))],
      expected: {
        ...noChanges,
        added: ["scripts/build.sh"],
        deleted: ["build.sh"],
        renamed: [{ from: "build.sh", to: "scripts/build.sh" }],
        uncommitted: ["build.sh", "scripts/build.sh"],
      },
    },
    {
      situation: "renamed and edited: different blobs, not paired, never lost",
      changes: [change("a.ts", "D", file("a v1"), null, true), change("b.ts", "A", null, file("a v2"), true)],
      expected: { ...noChanges, added: ["b.ts"], deleted: ["a.ts"] },
    },
    {
      situation: "empty files never paired (they all share one blob)",
      changes: [change("pkg/__init__.py", "D", emptyFile, null, true), change("other/__init__.py", "A", null, emptyFile, true)],
      expected: {
        ...noChanges,
        added: ["other/__init__.py"],
        deleted: ["pkg/__init__.py"],
      },
    },
    {
      situation: "a file and a symlink with equal blobs are not a rename",
      changes: [change("current.txt", "D", file("v2"), null, true), change("current", "A", null, symlink("v2"), true)],
      expected: { ...noChanges, added: ["current"], deleted: ["current.txt"] },
    },
    {
      situation: "several identical files moved: same file name preferred, then path order",
      changes: [
        change("z/LICENSE", "D", file("mit"), null, true),
        change("a/util.ts", "D", file("mit"), null, true),
        change("new/LICENSE", "A", null, file("mit"), true),
        change("b/copy.txt", "A", null, file("mit"), true),
        change("c/extra.txt", "A", null, file("mit"), true),
      ],
      expected: {
        ...noChanges,
        added: ["b/copy.txt", "c/extra.txt", "new/LICENSE"],
        deleted: ["a/util.ts", "z/LICENSE"],
        renamed: [
          { from: "a/util.ts", to: "b/copy.txt" },
          { from: "z/LICENSE", to: "new/LICENSE" },
        ],
      },
    },
    {
      situation: "modified files are never paired",
      changes: [change("a.ts", "M", file("x"), file("y"), true), change("b.ts", "M", file("y"), file("x"), true)],
      expected: { ...noChanges, modified: ["a.ts", "b.ts"] },
    },
  ])("$situation", ({ changes, expected }) => {
    expect(summarizeChanges(changes)).toEqual(expected);
  });

  it("pairs the same way whatever the input order", () => {
    const changes = [
      change("z/LICENSE", "D", file("mit"), null),
      change("a/util.ts", "D", file("mit"), null),
      change("new/LICENSE", "A", null, file("mit")),
      change("b/copy.txt", "A", null, file("mit")),
    ];
    expect(summarizeChanges([...changes].reverse())).toEqual(summarizeChanges(changes));
  });

  it("summarizes the net changes of a committed rename", () => {
    const { snapshot, changes } = gitObservations({
      committed: [commit("src/utils.ts", file("utils"), null), commit("src/lib/utils.ts", null, file("utils"))],
    });
    expect(summarizeChanges(computeNetChanges(snapshot, changes))).toEqual({
      ...noChanges,
      added: ["src/lib/utils.ts"],
      deleted: ["src/utils.ts"],
      renamed: [{ from: "src/utils.ts", to: "src/lib/utils.ts" }],
    });
  });
});
