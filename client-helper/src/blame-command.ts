/**
 * @module blame-command
 * `waymark blame <file>`: for each line of a file at HEAD, the task and workflow that wrote it,
 * the agent and model, or "not recorded": one `git blame --porcelain` of the file, each line's
 * commit and its number there looked up in the workflows' Agent Trace records
 * (@waymark/protocol/trace-blame), read from export files (offline) or from the endpoint. git
 * runs with the repository's command-bearing config made inert and without textconv: blaming a
 * file executes nothing a repository defines. The file's lines are printed here only; nothing is
 * sent anywhere but the export's request.
 */
import { readFile, realpath } from "node:fs/promises";

import { relative, resolve } from "node:path";
import { carryLine, diffHunks, type Hunk, type LineAuthorship, parseTraceRecords, TraceIndex } from "@waymark/protocol/trace-blame";
import { inertContext } from "./git/inert-config.js";
import { type GitContext, GitError, runGit } from "./git/process.js";

/** One line of the file at HEAD: the commit git blames, the line's number and path there, its text. */
export interface BlamedLine {
  commit: string;
  origLine: number;
  path: string;
  text: string;
}

/** Unquotes a path git wrote C-style ("a\"b", octal escapes for bytes). */
function unquote(path: string): string {
  if (!path.startsWith('"')) return path;
  const bytes: number[] = [];
  const body = path.slice(1, -1);
  const simple: Record<string, number> = { n: 10, t: 9, r: 13, a: 7, b: 8, f: 12, v: 11, '"': 34, "\\": 92 };
  for (let i = 0; i < body.length; i++) {
    const char = body[i] as string;
    if (char !== "\\") {
      bytes.push(...Buffer.from(char, "utf8"));
      continue;
    }
    const next = body[i + 1] as string;
    if (/[0-7]/.test(next)) {
      bytes.push(Number.parseInt(body.slice(i + 1, i + 4), 8));
      i += 3;
    } else {
      bytes.push(simple[next] ?? next.charCodeAt(0));
      i += 1;
    }
  }
  return Buffer.from(bytes).toString("utf8");
}

/** `git blame --porcelain` output as one entry per line of the file. */
export function parseBlamePorcelain(out: string): BlamedLine[] {
  const lines: BlamedLine[] = [];
  const pathOf = new Map<string, string>();
  let commit = "";
  let origLine = 0;
  let at = 0;
  while (at < out.length) {
    let end = out.indexOf("\n", at);
    if (end < 0) end = out.length;
    const line = out.slice(at, end);
    at = end + 1;
    if (line.startsWith("\t")) {
      lines.push({ commit, origLine, path: pathOf.get(commit) ?? "", text: line.slice(1) });
      continue;
    }
    const header = /^([0-9a-f]{40,64}) (\d+) \d+/.exec(line);
    if (header) {
      commit = header[1] as string;
      origLine = Number(header[2]);
    } else if (line.startsWith("filename ")) pathOf.set(commit, unquote(line.slice("filename ".length)));
  }
  return lines;
}

export interface BlameRequest {
  file: string;
  dir: string;
  /** The records: export files' text, or what the endpoint answered. */
  exports: readonly string[];
  json: boolean;
}

/** `git cat-file --batch-check` of each name: its object id, or null when it names nothing. */
async function objectIds(context: GitContext, names: readonly string[]): Promise<(string | null)[]> {
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
async function pairHunks(context: GitContext, path: string, pairs: readonly [string, string][]): Promise<Map<string, Hunk[]>> {
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

/** pairHunks, where a record naming a commit this clone lacks leaves its pairs out (their lines are then looked up as "no line"). */
async function carriedHunks(context: GitContext, path: string, pairs: readonly [string, string][]): Promise<Map<string, Hunk[]>> {
  if (pairs.length === 0) return new Map();
  return pairHunks(context, path, pairs).catch((error: unknown) => {
    if (error instanceof GitError) return new Map<string, Hunk[]>();
    throw error;
  });
}

/**
 * Each line's authorship: the records of its commit, carried to a task's end commit through git's
 * diff where needed. `known`: hunks already read, per path, keyed `from\0to`.
 */
export async function blameLines(
  context: GitContext,
  lines: readonly BlamedLine[],
  index: TraceIndex,
  known: Map<string, Map<string, Hunk[]>> = new Map(),
): Promise<LineAuthorship[]> {
  // The pairs (commit made during a task → the task's end commit) still to read, per path.
  const missing = new Map<string, Map<string, [string, string]>>();
  for (const line of lines) {
    const records = index.recordsOf(line.commit);
    const end = records && "during" in records ? records.during[0]?.revision : undefined;
    const key = `${line.commit}\0${end}`;
    if (!end || known.get(line.path)?.has(key)) continue;
    const forPath = missing.get(line.path) ?? new Map<string, [string, string]>();
    forPath.set(key, [line.commit, end]);
    missing.set(line.path, forPath);
  }
  const carried = known;
  for (const [path, forPath] of missing) {
    const hunks = await carriedHunks(context, path, [...forPath.values()]);
    carried.set(path, new Map([...(carried.get(path) ?? []), ...hunks]));
  }
  return lines.map((line) => {
    const records = index.recordsOf(line.commit);
    if (records === null) return { who: "not_recorded" };
    if ("at" in records) return TraceIndex.attribute(records.at, line.path, line.origLine);
    // Made during a task before its end: the line's number at the task's end commit.
    const hunks = carried.get(line.path)?.get(`${line.commit}\0${records.during[0]?.revision}`);
    return TraceIndex.attribute(records.during, line.path, hunks ? carryLine(hunks, line.origLine) : null);
  });
}

const WHO_WORDS: Record<LineAuthorship["who"], string> = {
  agent: "agent",
  others: "others",
  not_observed: "not observed",
  not_recorded: "not recorded",
};

/** `git blame`'s columns with the writer instead of the author: commit, who (and model), task, line number, text. */
function formatLines(lines: readonly BlamedLine[], authors: readonly LineAuthorship[]): string {
  const who = authors.map((a) =>
    a.model_id ? `${WHO_WORDS[a.who]} ${a.model_id}` : a.agent && a.who === "agent" ? `agent ${a.agent}` : WHO_WORDS[a.who],
  );
  const task = authors.map((a) => (a.task ? `${a.task.length > 40 ? `${a.task.slice(0, 39)}…` : a.task}` : (a.task_id ?? "")));
  const whoWidth = Math.max(...who.map((w) => w.length));
  const taskWidth = Math.max(...task.map((t) => t.length));
  const numberWidth = String(lines.length).length;
  return lines
    .map(
      (line, i) =>
        `${line.commit.slice(0, 8)} ${(who[i] as string).padEnd(whoWidth)}  ${(task[i] as string).padEnd(taskWidth)} ${String(i + 1).padStart(numberWidth)}) ${line.text}\n`,
    )
    .join("");
}

/** Per task and workflow, how many lines; for the closing count. */
function totals(authors: readonly LineAuthorship[]): string {
  const counts: Record<LineAuthorship["who"], number> = { agent: 0, others: 0, not_observed: 0, not_recorded: 0 };
  for (const author of authors) counts[author.who]++;
  return (Object.keys(counts) as LineAuthorship["who"][])
    .filter((who) => counts[who] > 0)
    .map((who) => `${WHO_WORDS[who]} ${counts[who]}`)
    .join(" · ");
}

export class BlameUsageError extends Error {}

/** The text (or JSON) `waymark blame` prints. */
export async function runBlame(request: BlameRequest): Promise<string> {
  const context = await inertContext(request.dir);
  const root = (await runGit(context, ["rev-parse", "--show-toplevel"])).toString("utf8").trim();
  const path = relative(root, resolve(await realpath(request.dir), request.file));
  if (path.startsWith("..")) throw new BlameUsageError(`<file>: ${request.file} is outside the repository at ${root}`);
  const rooted: GitContext = { ...context, cwd: root };
  // git blame is the long part: the records are read while it runs, and the diffs that carry a
  // task's earlier commits to its end commit run beside it (on the pairs the records name).
  const blamed = runGit(rooted, ["blame", "--porcelain", "--no-textconv", "HEAD", "--", path]);
  blamed.catch(() => {});
  const records = request.exports.flatMap((text, i) => {
    try {
      return parseTraceRecords(JSON.parse(text));
    } catch (error) {
      throw new BlameUsageError(`export ${i + 1}: not Agent Trace records: ${(error as Error).message}`);
    }
  });
  const index = new TraceIndex(records);
  const early = carriedHunks(rooted, path, index.carriedPairs(path));
  early.catch(() => {});
  const lines = parseBlamePorcelain((await blamed).toString("utf8"));
  const authors = await blameLines(rooted, lines, index, new Map([[path, await early]]));
  if (request.json) {
    return `${JSON.stringify(
      { path, records: index.size, lines: lines.map((line, i) => ({ line: i + 1, commit: line.commit, ...authors[i] })) },
      null,
      2,
    )}\n`;
  }
  return `${formatLines(lines, authors)}${path}: ${lines.length} line(s): ${totals(authors) || "none"} (from ${index.size} Agent Trace record(s))\n`;
}

/** The exports' text from files. */
export async function readExports(files: readonly string[]): Promise<string[]> {
  return Promise.all(
    files.map((file) =>
      readFile(file, "utf8").catch((error: NodeJS.ErrnoException) => {
        throw new BlameUsageError(`--trace: cannot read ${file}: ${error.code ?? error.message}`);
      }),
    ),
  );
}
