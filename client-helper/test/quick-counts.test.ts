import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { prng } from "../../test/support/stats";
import { quickCounts, quickHunk } from "../src/quick-counts.js";

const dir = mkdtempSync(join(tmpdir(), "waymark-quick-counts-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** git's own `diff --no-index --numstat` between two contents (null: the file is absent on that side). */
function gitNumstat(before: Buffer | null, after: Buffer | null, name: string): string {
  const side = (content: Buffer | null, suffix: string) => {
    if (content === null) return "/dev/null";
    const file = join(dir, `${name}.${suffix}`);
    writeFileSync(file, content);
    return file;
  };
  let out: string;
  try {
    out = execFileSync("git", ["diff", "--no-index", "--numstat", "--", side(before, "a"), side(after, "b")], { encoding: "utf8" });
  } catch (error) {
    out = String((error as { stdout: string }).stdout);
  }
  if (out === "") return "0 0";
  const [added = "", removed = ""] = out.split("\t");
  return added === "-" ? "binary" : `${added} ${removed}`;
}

const shown = (counts: ReturnType<typeof quickCounts>) => (counts === "binary" ? "binary" : counts && `${counts.added} ${counts.removed}`);
const b = (text: string) => Buffer.from(text, "latin1");

describe("quickCounts: git's numstat where the alignment cannot matter, else left to git", () => {
  it.each([
    ["lines appended", b("a\nb\n"), b("a\nb\nc\nd\n"), "2 0"],
    ["lines removed from the middle", b("a\nb\nc\nd\n"), b("a\nd\n"), "0 2"],
    ["one line changed", b("a\nb\nc\n"), b("a\nB\nc\n"), "1 1"],
    ["a block replaced by lines it does not share", b("a\nb\nc\nz\n"), b("a\nx\ny\nw\nz\n"), "3 2"],
    ["the last newline added", b("a\nb"), b("a\nb\n"), "1 1"],
    ["CRLF against LF, bytes as they are", b("a\r\nb\r\n"), b("a\nb\n"), "2 2"],
    ["a file added", null, b("a\nb\nc"), "3 0"],
    ["a file deleted", b("a\n\n"), null, "0 2"],
    ["an empty file added", null, b(""), "0 0"],
    ["a NUL byte in the first 8,000 bytes", b("text\n"), Buffer.from([0x61, 0x00, 0x0a]), "binary"],
    ["a NUL byte only past 8,000 bytes", b(`${"x".repeat(8000)}\n`), b(`${"x".repeat(8000)}\0\n`), "1 1"],
    ["identical contents", b("same\n"), b("same\n"), "0 0"],
    ["identical binary contents", Buffer.from([0, 1, 0]), Buffer.from([0, 1, 0]), "0 0"],
  ] as const)("%s", (name, before, after, expected) => {
    expect(shown(quickCounts(before, after))).toBe(expected);
    expect(gitNumstat(before, after, name.replaceAll(/\W/g, "-"))).toBe(expected);
  });

  it("leaves to git a change whose remainders share a line (where the alignment decides)", () => {
    expect(quickCounts(b("a\nx\nb\n"), b("a\ny\nx\nz\nb\n"))).toBeNull();
    expect(quickCounts(b("p\nq\np\n"), b("q\np\nq\n"))).toBeNull();
  });

  it("agrees with git diff --numstat on 400 random pairs it answers, seeded", () => {
    const random = prng(20261123);
    const pick = <T>(items: readonly T[]) => items[Math.floor(random() * items.length)] as T;
    const vocabulary = ["alpha\n", "beta\n", "gamma\n", "delta\n", "x\r\n", "\n", "  indented\n", "tail"];
    const content = (lines: number) => {
      let text = "";
      for (let i = 0; i < lines; i++) text += pick(vocabulary);
      return random() < 0.05 ? Buffer.concat([b(text), Buffer.from([0])]) : b(text);
    };
    let answered = 0;
    for (let i = 0; answered < 400 && i < 4000; i++) {
      const before = random() < 0.1 ? null : content(Math.floor(random() * 8));
      let after: Buffer | null;
      if (before && random() < 0.6) {
        // An edit of the same file: a few lines replaced, inserted or removed.
        const lines = before.toString("latin1").split(/(?<=\n)/);
        const at = Math.floor(random() * (lines.length + 1));
        lines.splice(at, Math.floor(random() * 3), ...Array.from({ length: Math.floor(random() * 3) }, () => pick(vocabulary)));
        after = b(lines.join(""));
      } else {
        after = random() < 0.1 ? null : content(Math.floor(random() * 8));
      }
      if (before === null && after === null) continue;
      const quick = quickCounts(before, after);
      if (quick === null) continue;
      answered++;
      expect({ i, counts: shown(quick) }).toEqual({ i, counts: gitNumstat(before, after, `random-${i}`) });
    }
    expect(answered).toBe(400);
  });
});

/** The hunk headers of git's own `diff --no-index -U0` between two contents, as "-s,n +s,m". */
function gitHunks(before: Buffer, after: Buffer, name: string): string[] {
  writeFileSync(join(dir, `${name}.a`), before);
  writeFileSync(join(dir, `${name}.b`), after);
  let out: string;
  try {
    out = execFileSync("git", ["diff", "--no-index", "-U0", "--", join(dir, `${name}.a`), join(dir, `${name}.b`)], { encoding: "latin1" });
  } catch (error) {
    out = String((error as { stdout: string }).stdout);
  }
  return out
    .split("\n")
    .flatMap((line) => /^@@ -(\d+(?:,\d+)?) \+(\d+(?:,\d+)?) @@/.exec(line) ?? [])
    .filter((_, k) => k % 3 === 0)
    .map((header) => header.replace(/^@@ (\S+) (\S+) @@$/, "$1 $2"))
    .map((header) => header.replace(/-(\d+) /, "-$1,1 ").replace(/\+(\d+)$/, "+$1,1"));
}

const hunkHeader = (hunk: NonNullable<ReturnType<typeof quickHunk>>) =>
  `-${hunk.oldStart},${hunk.oldCount} +${hunk.newStart},${hunk.newCount}`;

describe("quickHunk: git's one hunk where the lines cannot line up another way, else left to git", () => {
  it.each([
    ["one line changed", b("a\nb\nc\n"), b("a\nB\nc\n"), "-2,1 +2,1"],
    ["lines inserted", b("a\nb\n"), b("a\nx\ny\nb\n"), "-1,0 +2,2"],
    ["lines removed", b("a\nx\ny\nb\n"), b("a\nb\n"), "-2,2 +1,0"],
    ["the first line changed", b("file 1\nxxxx\n"), b("file 1 (edit 1)\nxxxx\n"), "-1,1 +1,1"],
    ["the last newline added", b("a\nb"), b("a\nb\n"), "-2,1 +2,1"],
  ] as const)("%s", (name, before, after, expected) => {
    const hunk = quickHunk(before, after);
    expect(hunk && hunkHeader(hunk)).toBe(expected);
    expect(gitHunks(before, after, `hunk-${name.replaceAll(/\W/g, "-")}`)).toEqual([expected]);
  });

  it("leaves to git a block that could slide (git's heuristics place it) and remainders that share a line", () => {
    // "b\n" inserted after "b\n": git may show it as lines 2 or 3.
    expect(quickHunk(b("a\nb\nc\n"), b("a\nb\nb\nc\n"))).toBeNull();
    expect(quickHunk(b("x\n}\n"), b("x\n}\n\ny\n}\n"))).toBeNull();
    expect(quickHunk(b("a\nx\nb\n"), b("a\ny\nx\nz\nb\n"))).toBeNull();
    expect(quickHunk(Buffer.from([0x61, 0x00]), b("a\n"))).toBeNull();
  });

  it("agrees with git diff -U0 on 400 random pairs it answers, seeded", () => {
    const random = prng(20261129);
    const pick = <T>(items: readonly T[]) => items[Math.floor(random() * items.length)] as T;
    const vocabulary = ["alpha\n", "beta\n", "gamma\n", "}\n", "\n", "  indented\n", "tail"];
    let answered = 0;
    let declined = 0;
    for (let i = 0; answered < 400 && i < 6000; i++) {
      let text = "";
      for (let k = 1 + Math.floor(random() * 8); k > 0; k--) text += pick(vocabulary);
      const lines = text.split(/(?<=\n)/);
      const at = Math.floor(random() * (lines.length + 1));
      lines.splice(at, Math.floor(random() * 3), ...Array.from({ length: Math.floor(random() * 3) }, () => pick(vocabulary)));
      const before = b(text);
      const after = b(lines.join(""));
      if (before.equals(after) || after.length === 0) continue;
      const hunk = quickHunk(before, after);
      if (hunk === null) {
        declined++;
        continue;
      }
      answered++;
      expect({ i, hunks: [hunkHeader(hunk)] }).toEqual({ i, hunks: gitHunks(before, after, `random-hunk-${i}`) });
    }
    expect(answered).toBe(400);
    // The seeded pairs include blocks that slide and remainders that share lines: both are left to git.
    expect(declined).toBeGreaterThan(50);
  });
});
