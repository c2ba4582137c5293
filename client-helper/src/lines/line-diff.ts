/**
 * @module lines/line-diff
 * Which lines two contents share, as git's own diff says it (so the ranges agree with `git blame`
 * and `git diff --numstat`, which use the same diff), for many pairs at once: every content goes
 * into a scratch repository of the helper's own (../scratch.ts: none of the user's config or
 * attributes apply) with one `git fast-import`, each as a tree of one file, and every pair is
 * diffed by one `git diff-tree --stdin -p -U0`, whose hunk headers are all that is read. Pairs
 * whose answer needs no diff (a side absent, equal sides) are answered here, and so are changes
 * that git can only diff one way (../quick-counts.ts's quickHunk: a block of lines that shares
 * none with what it replaced and cannot slide), as most edits are: then no git process starts.
 */
import { rm } from "node:fs/promises";
import { startGit } from "../git/process.js";
import { EMPTY_TREE } from "../git/queries.js";
import { quickHunk } from "../quick-counts.js";
import { COMMITTER, FAST_IMPORT, makeScratchRepository, objectId, treeId } from "../scratch.js";

/** Lines `oldStart`… (`oldCount` of them) of the first side became lines `newStart`… of the second, 1-based as git numbers them. */
export type Hunk = { oldStart: number; oldCount: number; newStart: number; newCount: number };

const DIFF = ["diff-tree", "--stdin", "-r", "-p", "-U0", "--no-renames", "--no-ext-diff", "--no-textconv", "--no-color"];

/** How many lines a content has, as git counts them (a last line without a newline is one). */
export function lineCount(content: Buffer | null): number {
  if (content === null || content.length === 0) return 0;
  let lines = 0;
  for (let at = content.indexOf(0x0a); at >= 0; at = content.indexOf(0x0a, at + 1)) lines++;
  return content[content.length - 1] === 0x0a ? lines : lines + 1;
}

const HUNK = /^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@/;

/** The hunks of each pair, in the order given. `scratchRoot`: where the scratch repository is made (the helper's cache). */
export async function diffPairs(scratchRoot: string, pairs: readonly (readonly [Buffer | null, Buffer | null])[]): Promise<Hunk[][]> {
  const results: (Hunk[] | null)[] = pairs.map(([a, b]) => {
    if (a === null && b === null) return [];
    if (a !== null && b !== null && a.equals(b)) return [];
    if (a === null || a.length === 0) return [{ oldStart: 0, oldCount: 0, newStart: 1, newCount: lineCount(b) }];
    if (b === null || b.length === 0) return [{ oldStart: 1, oldCount: lineCount(a), newStart: 0, newCount: 0 }];
    const hunk = quickHunk(a, b);
    return hunk && [hunk];
  });
  const asked = pairs.flatMap((pair, index) => (results[index] === null ? [{ index, pair }] : []));
  if (asked.length === 0) return results as Hunk[][];
  // Each content once, as a commit of one file named "f": fast-import writes its tree, whose id is computed here.
  const trees = new Map<Buffer, string>();
  const byBlob = new Map<string, string>();
  const stream: Buffer[] = [];
  let marks = 0;
  const treeOf = (content: Buffer): string => {
    const known = trees.get(content);
    if (known) return known;
    const blob = objectId("blob", content);
    const hex = blob.toString("hex");
    let tree = byBlob.get(hex);
    if (!tree) {
      marks++;
      stream.push(Buffer.from(`blob\nmark :${marks}\ndata ${content.length}\n`), content, Buffer.from("\n"));
      stream.push(Buffer.from(`commit refs/heads/v${marks}\n${COMMITTER}M 100644 :${marks} f\n\n`));
      tree = treeId([{ name: "f", blob }]);
      byBlob.set(hex, tree);
    }
    trees.set(content, tree);
    return tree;
  };
  const keys = asked.map(({ pair: [a, b] }) => `${a === null ? EMPTY_TREE : treeOf(a)} ${b === null ? EMPTY_TREE : treeOf(b)}`);
  stream.push(Buffer.from("done\n"));
  const { dir, context } = makeScratchRepository(scratchRoot);
  try {
    const importer = startGit(context, FAST_IMPORT);
    const differ = startGit(context, DIFF);
    await importer.finish(Buffer.concat(stream));
    const unique = [...new Set(keys)];
    const out = await differ.finish(Buffer.from(`${unique.join("\n")}\n`));
    const hunks = parseHunks(out.toString("latin1"), new Set(unique));
    asked.forEach(({ index }, at) => {
      results[index] = hunks.get(keys[at] as string) ?? [];
    });
    return results as Hunk[][];
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** Hunks per input line of `diff-tree --stdin -p -U0`, which repeats each input line before its patch. */
function parseHunks(out: string, inputs: ReadonlySet<string>): Map<string, Hunk[]> {
  const hunks = new Map<string, Hunk[]>();
  let current: Hunk[] | null = null;
  for (const line of out.split("\n")) {
    if (inputs.has(line)) {
      current = [];
      hunks.set(line, current);
      continue;
    }
    const match = current && line.startsWith("@@ ") ? HUNK.exec(line) : null;
    if (!match || !current) continue;
    current.push({
      oldStart: Number(match[1]),
      oldCount: match[2] === undefined ? 1 : Number(match[2]),
      newStart: Number(match[3]),
      newCount: match[4] === undefined ? 1 : Number(match[4]),
    });
  }
  return hunks;
}
