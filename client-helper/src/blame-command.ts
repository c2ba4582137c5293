/**
 * @module blame-command
 * `waymark blame <file>`: for each line of a file at HEAD, the task and workflow that wrote it,
 * the agent and model, or "not recorded": one `git blame --porcelain` of the file, each line's
 * commit and its number there looked up in the repository's own notes (./notes/attribution.ts:
 * offline, with nothing but a clone), and for a commit without a note in the workflows' Agent
 * Trace records (@waymark/protocol/trace-blame), read from export files or from the endpoint. git
 * runs with the repository's command-bearing config made inert and without textconv: blaming a
 * file executes nothing a repository defines. The file's lines are printed here only; nothing is
 * sent anywhere but the export's request.
 */
import { readFile, realpath } from "node:fs/promises";

import { relative, resolve } from "node:path";
import { carryLine, type Hunk, type LineAuthorship, parseTraceRecords, TraceIndex } from "@waymark/protocol/trace-blame";
import { pairHunks } from "./git/blobs.js";
import { inertContext } from "./git/inert-config.js";
import { type GitContext, GitError, runGit } from "./git/process.js";
import { NoteAttribution } from "./notes/attribution.js";
import { listNotes, notesRefs } from "./notes/store.js";

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
  /** Records besides the repository's notes: export files' text, or what the endpoint answered. */
  exports: readonly string[];
  json: boolean;
  /** The revision whose lines are blamed (default HEAD). */
  revision?: string;
  /** Where a diff of a note's line hashes runs (the helper's cache). */
  scratchRoot: string;
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

/** A file's lines at a revision and who wrote each (the notes first, then the records given). */
export interface FileBlame {
  path: string;
  lines: BlamedLine[];
  authors: LineAuthorship[];
}

/**
 * `git blame --porcelain` of `path` at `revision` (repository-relative), each line attributed from
 * the repository's notes (./notes/attribution.ts) and, for commits without a note, from the
 * records given. `notes`: already loaded (the carry step asks many files at once), or loaded here
 * for the blamed commits.
 */
export async function blameFile(
  rooted: GitContext,
  revision: string,
  path: string,
  index: TraceIndex,
  notes: NoteAttribution | { scratchRoot: string },
): Promise<FileBlame> {
  // git blame is the long part: the diffs that carry a task's earlier commits to its end commit
  // run beside it (on the pairs the records name).
  const blamed = runGit(rooted, ["blame", "--porcelain", "--no-textconv", revision, "--", path]);
  blamed.catch(() => {});
  const early = carriedHunks(rooted, path, index.carriedPairs(path));
  early.catch(() => {});
  // The notes are listed beside it too; only those of the commits it names are read.
  const listing = notes instanceof NoteAttribution ? null : listNotes(rooted);
  listing?.catch(() => {});
  const lines = parseBlamePorcelain((await blamed).toString("utf8"));
  const fromNotes =
    notes instanceof NoteAttribution
      ? notes
      : await NoteAttribution.load(rooted, notes.scratchRoot, new Set(lines.map((l) => l.commit)), (await listing) ?? undefined);
  const [noted, recorded] = await Promise.all([
    fromNotes.attribute(lines),
    blameLines(rooted, lines, index, new Map([[path, await early]])),
  ]);
  return { path, lines, authors: lines.map((_, i) => noted[i] ?? (recorded[i] as LineAuthorship)) };
}

/** The text (or JSON) `waymark blame` prints. */
export async function runBlame(request: BlameRequest): Promise<string> {
  const context = await inertContext(request.dir);
  const root = (await runGit(context, ["rev-parse", "--show-toplevel"])).toString("utf8").trim();
  const path = relative(root, resolve(await realpath(request.dir), request.file));
  if (path.startsWith("..")) throw new BlameUsageError(`<file>: ${request.file} is outside the repository at ${root}`);
  const rooted: GitContext = { ...context, cwd: root };
  const records = request.exports.flatMap((text, i) => {
    try {
      return parseTraceRecords(JSON.parse(text));
    } catch (error) {
      throw new BlameUsageError(`export ${i + 1}: not Agent Trace records: ${(error as Error).message}`);
    }
  });
  const index = new TraceIndex(records);
  const { lines, authors } = await blameFile(rooted, request.revision ?? "HEAD", path, index, { scratchRoot: request.scratchRoot });
  if (request.json) {
    return `${JSON.stringify(
      { path, records: index.size, lines: lines.map((line, i) => ({ line: i + 1, commit: line.commit, ...authors[i] })) },
      null,
      2,
    )}\n`;
  }
  const noted = authors.filter((a) => a.task_id !== undefined).length;
  const sources = `${index.size} Agent Trace record(s)${noted > 0 || index.size === 0 ? ", the repository's notes" : ""}`;
  return `${formatLines(lines, authors)}${path}: ${lines.length} line(s): ${totals(authors) || "none"} (from ${sources})\n`;
}

/** Whether the repository at `dir` holds Waymark notes (refs/notes/waymark or a remote-tracking copy). */
export async function hasNotes(dir: string): Promise<boolean> {
  try {
    return (await notesRefs(await inertContext(dir))).length > 0;
  } catch (error) {
    if (error instanceof GitError) return false;
    throw error;
  }
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
