import { describe, expect, it } from "vitest";
import type { PathChange } from "../../src/domain/changes";
import { attributeOverlaps, type CompletedTaskChanges, type Overlap, type TaskWindow, tasksOverlap } from "../../src/domain/overlap";
import { change, file } from "./fixtures";

const window = (task_id: string, started_at: number, completed_at: number | null, ancestors: string[] = []): TaskWindow => ({
  task_id,
  started_at,
  completed_at,
  ancestors,
});

const editApp = change("src/app.ts", "M", file("app v1"), file("app v2"));
const editAppOtherwise = change("src/app.ts", "M", file("app v1"), file("app v3"));
const addReadme = change("README.md", "A", null, file("readme"));
const addConfig = change("src/config.ts", "A", null, file("config"));

describe("tasksOverlap", () => {
  it.each([
    {
      situation: "windows intersect",
      left: window("a", 0, 10),
      right: window("b", 5, 15),
      overlap: true,
    },
    {
      situation: "one inside the other",
      left: window("a", 0, 100),
      right: window("b", 5, 15),
      overlap: true,
    },
    {
      situation: "other still open",
      left: window("a", 0, 10),
      right: window("b", 5, null),
      overlap: true,
    },
    {
      situation: "same start",
      left: window("a", 5, 10),
      right: window("b", 5, 8),
      overlap: true,
    },
    {
      situation: "disjoint windows",
      left: window("a", 0, 10),
      right: window("b", 20, 30),
      overlap: false,
    },
    {
      situation: "windows only touch",
      left: window("a", 0, 10),
      right: window("b", 10, 20),
      overlap: false,
    },
    {
      situation: "open task started after",
      left: window("a", 0, 10),
      right: window("b", 11, null),
      overlap: false,
    },
    {
      situation: "parent and subtask",
      left: window("parent", 0, 100),
      right: window("child", 5, 15, ["parent"]),
      overlap: false,
    },
    {
      situation: "subtask and parent",
      left: window("child", 5, 15, ["root", "parent"]),
      right: window("root", 0, 100),
      overlap: false,
    },
    {
      situation: "sibling subtasks",
      left: window("x", 0, 10, ["parent"]),
      right: window("y", 5, 15, ["parent"]),
      overlap: true,
    },
    {
      situation: "the task itself",
      left: window("a", 0, 10),
      right: window("a", 0, 10),
      overlap: false,
    },
  ])("$situation → $overlap", ({ left, right, overlap }) => {
    expect(tasksOverlap(left, right)).toBe(overlap);
    expect(tasksOverlap(right, left)).toBe(overlap);
  });
});

const completing = (changes: PathChange[], ancestors: string[] = []): CompletedTaskChanges => ({
  window: window("later", 10, 100, ancestors),
  changes,
});

describe("attributeOverlaps: two tasks open at once in one working tree", () => {
  it.each<{
    situation: string;
    completing: CompletedTaskChanges;
    others: CompletedTaskChanges[];
    kept: PathChange[];
    overlaps: Overlap[];
  }>([
    {
      situation: "same change seen twice: attributed once, to the first, and reported",
      completing: completing([editApp, addReadme]),
      others: [{ window: window("earlier", 0, 50), changes: [editApp, addConfig] }],
      kept: [addReadme],
      overlaps: [{ path: "src/app.ts", task_id: "earlier", same_change: true }],
    },
    {
      situation: "different changes to one path: both kept and reported",
      completing: completing([editAppOtherwise, addReadme]),
      others: [{ window: window("earlier", 0, 50), changes: [editApp] }],
      kept: [editAppOtherwise, addReadme],
      overlaps: [{ path: "src/app.ts", task_id: "earlier", same_change: false }],
    },
    {
      situation: "same path, same end state from another start: a different change",
      completing: completing([change("src/app.ts", "A", null, file("app v2"))]),
      others: [{ window: window("earlier", 0, 50), changes: [editApp] }],
      kept: [change("src/app.ts", "A", null, file("app v2"))],
      overlaps: [{ path: "src/app.ts", task_id: "earlier", same_change: false }],
    },
    {
      situation: "no path in common: nothing reported",
      completing: completing([addReadme]),
      others: [{ window: window("earlier", 0, 50), changes: [editApp] }],
      kept: [addReadme],
      overlaps: [],
    },
    {
      situation: "the parent completing after its subtask: not an overlap",
      completing: completing([editApp]),
      others: [{ window: window("child", 20, 50, ["later"]), changes: [editApp] }],
      kept: [editApp],
      overlaps: [],
    },
    {
      situation: "a subtask completing after its ancestor: not an overlap",
      completing: completing([editApp], ["root", "parent"]),
      others: [{ window: window("root", 0, 200), changes: [editApp] }],
      kept: [editApp],
      overlaps: [],
    },
    {
      situation: "windows that do not intersect: not an overlap",
      completing: completing([editApp]),
      others: [{ window: window("before", 0, 10), changes: [editApp] }],
      kept: [editApp],
      overlaps: [],
    },
    {
      situation: "several tasks: every overlap reported, sorted by path then task",
      completing: completing([editApp, addConfig, addReadme]),
      others: [
        {
          window: window("t-b", 0, 60),
          changes: [editAppOtherwise, addReadme],
        },
        { window: window("t-a", 5, 50), changes: [editApp] },
        { window: window("t-c", 0, 5), changes: [addConfig] },
      ],
      kept: [addConfig],
      overlaps: [
        { path: "README.md", task_id: "t-b", same_change: true },
        { path: "src/app.ts", task_id: "t-a", same_change: true },
        { path: "src/app.ts", task_id: "t-b", same_change: false },
      ],
    },
  ])("$situation", ({ completing, others, kept, overlaps }) => {
    expect(attributeOverlaps(completing, others)).toEqual({ kept, overlaps });
  });
});
