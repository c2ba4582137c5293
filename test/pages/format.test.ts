import { describe, expect, it } from "vitest";
import { taskFiles } from "../../src/pages/files";
import { formatCompact, formatCount } from "../../src/pages/format";

describe("humanised numbers", () => {
  it.each([
    [0, "0"],
    [999, "999"],
    [1000, "1,000"],
    [12345, "12,345"],
    [1234567, "1,234,567"],
    [-4200, "-4,200"],
  ])("formatCount(%d) is %s", (n, shown) => {
    expect(formatCount(n)).toBe(shown);
  });

  it.each([
    [0, "0"],
    [999, "999"],
    [1000, "1k"],
    [1250, "1.2k"],
    [12_345, "12k"],
    [999_999, "999k"],
    [1_000_000, "1M"],
    [3_450_000, "3.4M"],
    [10_000_000_000, "10B"],
  ])("formatCompact(%d) is %s (rounded down, never 1000k)", (n, shown) => {
    expect(formatCompact(n)).toBe(shown);
  });
});

const files = (overrides: Record<string, unknown>) => ({
  files_changed: { added: [], modified: [], deleted: [], renamed: [], uncommitted: [], ...overrides },
  verification: null,
});

describe("a task's file rows", () => {
  it.each([
    [
      "a rename is one row (not a deletion, an addition and a rename)",
      files({ added: ["b.ts"], deleted: ["a.ts"], renamed: [{ from: "a.ts", to: "b.ts" }] }),
      [["R", "b.ts", "a.ts"]],
    ],
    [
      "added, modified, deleted in that order",
      files({ added: ["n"], modified: ["m"], deleted: ["d"] }),
      [
        ["A", "n", undefined],
        ["M", "m", undefined],
        ["D", "d", undefined],
      ],
    ],
  ])("%s", (_case, task, rows) => {
    expect(taskFiles(task as never).rows.map((r) => [r.status, r.path, r.from])).toEqual(rows);
  });

  it("carries line counts, binary and unmeasured files, and bars in proportion to the largest change", () => {
    const { rows, totals } = taskFiles(
      files({
        added: ["big.ts", "logo.png", "gone-content.ts"],
        modified: ["small.ts"],
        lines: [
          { path: "big.ts", added: 90, removed: 10 },
          { path: "small.ts", added: 1, removed: 4 },
          { path: "logo.png", binary: true },
        ],
      }) as never,
    );
    expect(rows.map((r) => [r.path, r.lines, r.bar])).toEqual([
      ["big.ts", { added: 90, removed: 10 }, { added: 18, removed: 2 }],
      ["logo.png", "binary", { added: 0, removed: 0 }],
      ["gone-content.ts", null, { added: 0, removed: 0 }],
      // A non-zero count is at least one step.
      ["small.ts", { added: 1, removed: 4 }, { added: 1, removed: 1 }],
    ]);
    expect(totals).toEqual({ added: 91, removed: 14, binary: 1 });
  });

  it("marks out-of-scope and uncommitted files, a rename by either of its paths", () => {
    const { rows } = taskFiles({
      ...files({
        added: ["new.ts", "README.md"],
        deleted: ["old.ts"],
        renamed: [{ from: "old.ts", to: "new.ts" }],
        uncommitted: ["README.md"],
      }),
      verification: { scope_match: false, unexpected_files: ["old.ts", "README.md"], warnings: [] },
    } as never);
    expect(rows.map((r) => [r.path, r.outOfScope, r.uncommitted])).toEqual([
      ["README.md", true, true],
      ["new.ts", true, false],
    ]);
  });

  it("leaves a parent's files that its subtasks list to them, and counts them", () => {
    const result = taskFiles(files({ added: ["own.ts", "sub.ts"], renamed: [] }) as never, new Set(["sub.ts"]));
    expect([result.rows.map((r) => r.path), result.inSubtasks]).toEqual([["own.ts"], 1]);
  });
});
