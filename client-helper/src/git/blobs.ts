/**
 * @module git/blobs
 * Reading files as they are in commits, without a work tree: object ids and contents of
 * `<commit>:<path>` names (`git cat-file --batch-check` / `--batch`, one process each), and the
 * hunks of one path's diff between pairs of commits (`git diff-tree --stdin -p -U0`, one process).
 * No textconv, no external diff, no filter: the bytes git stores. Shared by `waymark blame`, the
 * notes a task leaves in the repository and the step that carries them through merges.
 */
import { diffHunks, type Hunk } from "@waymark/protocol/trace-blame";
import { type GitContext, runGit } from "./process.js";

/** `git cat-file --batch-check` of each name: its object id, or null when it names nothing. */
export async function objectIds(context: GitContext, names: readonly string[]): Promise<(string | null)[]> {
  const out = await runGit(context, ["cat-file", "--batch-check=%(objectname)"], Buffer.from(names.map((name) => `${name}\n`).join("")));
  return out
    .toString("utf8")
    .split("\n")
    .slice(0, names.length)
    .map((line) => (/^[0-9a-f]{40,64}$/.test(line) ? line : null));
}

/**
 * Hunks of `git diff -U0` of `path` for each pair of commits, keyed `from\0to`: none when the file
 * is the same blob at both (the usual case: a task's later commits left it alone), else read in
 * one `git diff-tree --stdin` per path (given two trees per input line, it echoes the line and
 * prints their diff). A pair missing from the answer has no place for its lines (the file is not
 * at one of the commits, or the clone lacks it).
 */
export async function pairHunks(context: GitContext, path: string, pairs: readonly [string, string][]): Promise<Map<string, Hunk[]>> {
  const hunks = new Map<string, Hunk[]>();
  // cat-file reads one name a line: a path with a newline cannot be named (its lines stay unplaced).
  if (path.includes("\n")) return hunks;
  const commits = [...new Set(pairs.flat())];
  const ids = await objectIds(
    context,
    commits.flatMap((commit) => [`${commit}^{tree}`, `${commit}:${path}`]),
  );
  const treeOf = new Map(commits.map((commit, i) => [commit, ids[2 * i]]));
  const blobOf = new Map(commits.map((commit, i) => [commit, ids[2 * i + 1]]));
  const toDiff: [string, string][] = [];
  for (const [from, to] of pairs) {
    const [fromBlob, toBlob] = [blobOf.get(from), blobOf.get(to)];
    if (!fromBlob || !toBlob || !treeOf.get(from) || !treeOf.get(to)) continue;
    if (fromBlob === toBlob) hunks.set(`${from}\0${to}`, []);
    else toDiff.push([from, to]);
  }
  if (toDiff.length === 0) return hunks;
  const input = toDiff.map(([from, to]) => `${treeOf.get(from)} ${treeOf.get(to)}\n`).join("");
  const out = await runGit(
    context,
    ["diff-tree", "--stdin", "-p", "-U0", "--no-renames", "--no-ext-diff", "--no-textconv", "--no-color", "--", path],
    Buffer.from(input),
  );
  // Each pair's section starts with its echoed line (two tree ids); diff lines never look like one.
  const byTrees = new Map<string, string[]>();
  let current: string[] = [];
  for (const line of out.toString("utf8").split("\n")) {
    if (/^[0-9a-f]{40,64} [0-9a-f]{40,64}$/.test(line)) {
      current = [];
      byTrees.set(line, current);
    } else current.push(line);
  }
  for (const [from, to] of toDiff)
    hunks.set(`${from}\0${to}`, diffHunks((byTrees.get(`${treeOf.get(from)} ${treeOf.get(to)}`) ?? []).join("\n")));
  return hunks;
}

/**
 * The contents of `<commit>:<path>` names (`git cat-file --batch`), null for a name that is no
 * blob there. A name with a newline cannot be asked (cat-file reads one a line): null too.
 */
export async function readObjects(context: GitContext, names: readonly string[]): Promise<(Buffer | null)[]> {
  const asked = names.filter((name) => !name.includes("\n"));
  const answers = new Map<string, Buffer | null>();
  if (asked.length > 0) {
    const out = await runGit(context, ["cat-file", "--batch"], Buffer.from(asked.map((name) => `${name}\n`).join("")));
    let at = 0;
    for (const name of asked) {
      const end = out.indexOf(0x0a, at);
      if (end < 0) break;
      const header = out.subarray(at, end).toString("utf8").split(" ");
      at = end + 1;
      if (header[1] !== "blob" || header[2] === undefined) {
        answers.set(name, null);
        // "missing" and "ambiguous" answers carry no content; another type's content is skipped.
        if (header[2] !== undefined) at += Number(header[2]) + 1;
        continue;
      }
      const size = Number(header[2]);
      answers.set(name, out.subarray(at, at + size));
      at += size + 1;
    }
  }
  return names.map((name) => answers.get(name) ?? null);
}
