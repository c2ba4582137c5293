import { describe, expect, it } from "vitest";
import { comparePaths, repoPathProblem } from "../../src/domain/paths";

describe("repoPathProblem", () => {
  it.each([
    { path: "README.md" },
    { path: "src/auth/config.ts" },
    { path: ".github/workflows/ci.yml" },
    { path: "docs/naïve café.md" },
    { path: 'say "hi".txt' },
    { path: "line\nbreak.txt" },
    { path: "back\\slash" },
    { path: "..hidden/...three" },
    { path: "日本語/ファイル 😀.ts" },
    { path: " leading and trailing space " },
    { path: "a".repeat(4096) },
    { path: "é".repeat(2048) },
  ])("valid: $path", ({ path }) => {
    expect(repoPathProblem(path)).toBeNull();
  });

  it.each([
    { path: "", problem: "must not be empty" },
    { path: "a\0b", problem: "must not contain NUL" },
    {
      path: "a".repeat(4097),
      problem: "must be at most 4096 UTF-8 bytes (is 4097)",
    },
    {
      path: "é".repeat(2049),
      problem: "must be at most 4096 UTF-8 bytes (is 4098)",
    },
    {
      path: "😀".repeat(1025),
      problem: "must be at most 4096 UTF-8 bytes (is 4100)",
    },
    {
      path: "bad\ud800.txt",
      problem: "must be well-formed Unicode (no lone surrogate)",
    },
    {
      path: "bad\udc00.txt",
      problem: "must be well-formed Unicode (no lone surrogate)",
    },
    {
      path: "/etc/passwd",
      problem: 'must be relative to the repository root (no leading "/")',
    },
    {
      path: "src//a.ts",
      problem: 'must not contain an empty segment ("//" or a trailing "/")',
    },
    {
      path: "src/",
      problem: 'must not contain an empty segment ("//" or a trailing "/")',
    },
    { path: "./a.ts", problem: 'must not contain a "." segment' },
    { path: "src/./a.ts", problem: 'must not contain a "." segment' },
    { path: "../outside", problem: 'must not contain a ".." segment' },
    { path: "src/..", problem: 'must not contain a ".." segment' },
  ])("invalid: $path → $problem", ({ path, problem }) => {
    expect(repoPathProblem(path)).toBe(problem);
  });
});

describe("comparePaths", () => {
  it.each([
    { left: "a", right: "b", order: -1 },
    { left: "b", right: "a", order: 1 },
    { left: "a", right: "a", order: 0 },
    { left: "B", right: "a", order: -1 },
    { left: "a/b", right: "a.b", order: 1 },
    { left: "z", right: "é", order: -1 },
  ])("$left vs $right → $order", ({ left, right, order }) => {
    expect(comparePaths(left, right)).toBe(order);
  });
});
