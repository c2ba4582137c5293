import { type DiffLink, diffLink, type FileChangeRef, shellWord } from "@waymark/protocol/diff-links";
import { describe, expect, it } from "vitest";

const START = "1".repeat(40);
const END = "2".repeat(40);
const ref = (overrides: Partial<FileChangeRef>): FileChangeRef => ({
  remote: "github.com/acme/app",
  start: START,
  end: END,
  path: "README.md",
  uncommitted: false,
  ...overrides,
});

describe("where a reviewer sees one file's change", () => {
  it.each<[string, Partial<FileChangeRef>, DiffLink]>([
    [
      "GitHub: the compare view at the file (its anchor is the SHA-256 of the path)",
      {},
      {
        host: "GitHub",
        url: `https://github.com/acme/app/compare/${START}...${END}#diff-b335630551682c19a781afebcf4d07bf978fb1f8ac04c6bf87428ed5106870f5`,
        command: `git diff ${START}..${END} -- README.md`,
      },
    ],
    [
      "GitLab, a group's project: two-dot compare at the file (its anchor is the SHA-1 of the path)",
      { remote: "gitlab.com/acme/tools/app" },
      {
        host: "GitLab",
        url: `https://gitlab.com/acme/tools/app/-/compare/${START}...${END}?straight=true#8ec9a00bfd09b3190ac6b22251dbb1aa95a0579d`,
        command: `git diff ${START}..${END} -- README.md`,
      },
    ],
    [
      "Bitbucket: newer commit first",
      { remote: "bitbucket.org/acme/app", path: "src/a b.ts" },
      {
        host: "Bitbucket",
        url: `https://bitbucket.org/acme/app/branches/compare/${END}%0D${START}#chg-src%2Fa%20b.ts`,
        command: `git diff ${START}..${END} -- 'src/a b.ts'`,
      },
    ],
    [
      "a host whose compare view is not known: the command only",
      { remote: "git.example.com/acme/app" },
      { command: `git diff ${START}..${END} -- README.md` },
    ],
    ["no remote: the command only", { remote: null }, { command: `git diff ${START}..${END} -- README.md` }],
    ["a local path as remote: the command only", { remote: "/srv/git/app" }, { command: `git diff ${START}..${END} -- README.md` }],
    [
      "a remote path that could reach another URL: no link",
      { remote: "github.com/acme/../evil" },
      { command: `git diff ${START}..${END} -- README.md` },
    ],
    [
      "uncommitted: on the developer's machine only, against its working tree",
      { uncommitted: true },
      { command: `git diff ${START} -- README.md` },
    ],
    ["no end commit recorded: against the working tree", { end: null }, { command: `git diff ${START} -- README.md` }],
    ["no start commit (a repository without commits): nothing to compare with", { start: null }, {}],
    ["a start that is not a commit id: nothing", { start: "HEAD~1; rm -rf /" }, {}],
  ])("%s", (_name, overrides, expected) => {
    expect(diffLink(ref(overrides))).toEqual(expected);
  });

  it.each([
    ["src/app.ts", "src/app.ts"],
    ["a b", "'a b'"],
    ["it's", "'it'\\''s'"],
    ["-rf", "-rf"],
    ["$(touch x)", "'$(touch x)'"],
    ["naïve.txt", "'naïve.txt'"],
  ])("shell word %s", (text, word) => expect(shellWord(text)).toBe(word));
});
