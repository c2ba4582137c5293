/**
 * @module notes/store
 * Reading and writing Waymark's git notes (@waymark/protocol/git-note) in the user's repository.
 *
 * Writing notes under refs/notes/waymark is the one change the helper makes to a repository, and
 * it is made with plumbing only, so that nothing else moves and nothing the repository defines
 * runs: the note blobs are hashed as given (`hash-object --no-filters`), the notes tree is built
 * in an index file of the helper's own outside the repository (GIT_INDEX_FILE: the repository's
 * index, HEAD, working tree, other refs and stash are never touched), the notes commit is made
 * with `commit-tree` (never signed, a fixed identity: no gpg program, no prompt) and the ref is
 * moved by `update-ref` with the value it was read at, so a concurrent writer (another helper,
 * `git notes`, a fetch into the ref) makes this write retry from the new value, never lose theirs.
 * Every git child runs with the repository's command-bearing config inert (../git/inert-config.ts)
 * and with hooks turned off (core.hooksPath: update-ref would run a reference-transaction hook).
 *
 * Reading takes the notes of refs/notes/waymark and of its remote-tracking copies (what
 * `waymark init` has fetches bring, refs/notes/remotes/<remote>/waymark) as one: a commit's entries
 * are the union of its notes in each. Writing folds in every such copy that the local ref does not
 * contain yet (a merge, as `git notes merge -s cat_sort_uniq` would make it), so that pushing
 * refs/notes/waymark afterwards is a fast-forward.
 */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { mergeNote, NOTE_MAX_BYTES, NOTES_REF, type ParsedNote, parseNote, type TaskNote } from "@waymark/protocol/git-note";
import { withoutHooks } from "../git/inert-config.js";
import { type GitContext, GitError, runGit } from "../git/process.js";
import { gitIsAncestor } from "../git/queries.js";

const ZERO = "0".repeat(40);
/** Remote-tracking copies of the notes ref, as `waymark init`'s fetch refspec names them. */
const TRACKING = /^refs\/notes\/remotes\/[^/]+\/waymark$/;
/** A concurrent writer moved the ref between the read and the update this many times in a row: give up (the caller says so). */
const WRITE_ATTEMPTS = 20;
/** This process's writes, one repository at a time: they wait for each other instead of racing (other processes still race, and retry). */
const writing = new Map<string, Promise<unknown>>();
/** Notes commits say who made them; a fixed identity needs no user config (CI) and asks nothing. */
const IDENTITY = {
  GIT_AUTHOR_NAME: "waymark",
  GIT_AUTHOR_EMAIL: "waymark@localhost",
  GIT_COMMITTER_NAME: "waymark",
  GIT_COMMITTER_EMAIL: "waymark@localhost",
};

/** The notes refs this repository holds: refs/notes/waymark and its remote-tracking copies, each with its commit. */
export async function notesRefs(context: GitContext): Promise<{ ref: string; commit: string }[]> {
  const out = (await runGit(context, ["for-each-ref", "--format=%(objectname) %(refname)", "refs/notes/"])).toString("utf8");
  const refs: { ref: string; commit: string }[] = [];
  for (const line of out.split("\n")) {
    const [commit, ref] = line.split(" ");
    if (commit && ref && (ref === NOTES_REF || TRACKING.test(ref))) refs.push({ ref, commit });
  }
  return refs;
}

/** The commit a note path names ("ab/cd…" under a fanout is "abcd…"), or null for a path that names none. */
function commitOfPath(path: string): string | null {
  const id = path.replaceAll("/", "");
  return /^[0-9a-f]{40}$|^[0-9a-f]{64}$/.test(id) ? id : null;
}

/** Every note of a notes commit: annotated commit → its note's path and blob. */
async function noteBlobs(context: GitContext, notesCommit: string): Promise<Map<string, { path: string; blob: string }>> {
  const out = await runGit(context, ["ls-tree", "-r", "-z", `${notesCommit}^{tree}`]);
  const notes = new Map<string, { path: string; blob: string }>();
  for (const entry of out.toString("utf8").split("\0")) {
    const tab = entry.indexOf("\t");
    if (tab < 0) continue;
    const [, type, blob] = entry.slice(0, tab).split(" ");
    const path = entry.slice(tab + 1);
    const commit = commitOfPath(path);
    if (type === "blob" && blob && commit) notes.set(commit, { path, blob });
  }
  return notes;
}

/** The contents of blobs, in one `cat-file --batch` (a blob over NOTE_MAX_BYTES is read as null). */
async function readBlobs(context: GitContext, blobs: readonly string[]): Promise<Map<string, string | null>> {
  const texts = new Map<string, string | null>();
  const unique = [...new Set(blobs)];
  if (unique.length === 0) return texts;
  const out = await runGit(context, ["cat-file", "--batch"], Buffer.from(unique.map((blob) => `${blob}\n`).join("")));
  let at = 0;
  for (const blob of unique) {
    const end = out.indexOf(0x0a, at);
    if (end < 0) break;
    const [, type, size] = out.subarray(at, end).toString("utf8").split(" ");
    at = end + 1;
    if (type === undefined || size === undefined) {
      texts.set(blob, null);
      continue;
    }
    const bytes = Number(size);
    texts.set(blob, bytes > NOTE_MAX_BYTES ? null : out.subarray(at, at + bytes).toString("utf8"));
    at += bytes + 1;
  }
  return texts;
}

/** What the notes say of some commits, from every notes ref as one. */
export interface NotesRead {
  /** Per annotated commit (of those asked, or all), its entries and the lines skipped. */
  byCommit: Map<string, ParsedNote>;
  /** The refs read. */
  refs: string[];
}

/** Every note of every notes ref: annotated commit → the blobs of its notes (one per ref holding it). */
export type NotesListing = { byCommit: Map<string, string[]>; refs: string[] };

/** Lists the notes of refs/notes/waymark and its remote-tracking copies (nothing read yet: no commit needs to be known for it). */
export async function listNotes(context: GitContext): Promise<NotesListing> {
  const refs = await notesRefs(context);
  const byCommit = new Map<string, string[]>();
  for (const notes of await Promise.all(refs.map((ref) => noteBlobs(context, ref.commit)))) {
    for (const [commit, { blob }] of notes) {
      const blobs = byCommit.get(commit) ?? [];
      if (!blobs.includes(blob)) blobs.push(blob);
      byCommit.set(commit, blobs);
    }
  }
  return { byCommit, refs: refs.map((r) => r.ref) };
}

/**
 * The entries attached to `commits` (all annotated commits when omitted), from refs/notes/waymark
 * and its remote-tracking copies; a line present in several is read once. `listing`: the notes
 * already listed (listNotes), e.g. while `git blame` ran.
 */
export async function readNotes(context: GitContext, commits?: ReadonlySet<string>, listing?: NotesListing): Promise<NotesRead> {
  const listed = listing ?? (await listNotes(context));
  const wanted: { commit: string; blob: string }[] = [];
  for (const [commit, blobs] of listed.byCommit)
    if (!commits || commits.has(commit)) for (const blob of blobs) wanted.push({ commit, blob });
  const texts = await readBlobs(
    context,
    wanted.map((w) => w.blob),
  );
  const lines = new Map<string, Set<string>>();
  for (const { commit, blob } of wanted) {
    const text = texts.get(blob);
    if (text === null || text === undefined) continue;
    const set = lines.get(commit) ?? new Set<string>();
    for (const line of text.split("\n")) if (line.trim() !== "") set.add(line);
    lines.set(commit, set);
  }
  const byCommit = new Map<string, ParsedNote>();
  for (const [commit, set] of lines) byCommit.set(commit, parseNote([...set].join("\n")));
  return { byCommit, refs: listed.refs };
}

/** The ref moved between this write's read and its update: read again. */
class RefMoved extends Error {}

/**
 * Adds `entries` to the notes of their commits (`TaskNote.commit`), replacing an entry of the same
 * task and commit, keeping everything else; returns the new notes commit. Retries while another
 * writer moves the ref meanwhile; throws after WRITE_ATTEMPTS such races, or on any git failure.
 */
export async function writeNotes(context: GitContext, entries: readonly TaskNote[], message = "waymark: task records"): Promise<string> {
  const key = context.cwd;
  const before = writing.get(key) ?? Promise.resolve();
  const mine = before.catch(() => {}).then(() => writeRetrying(context, entries, message));
  writing.set(key, mine);
  try {
    return await mine;
  } finally {
    if (writing.get(key) === mine) writing.delete(key);
  }
}

async function writeRetrying(context: GitContext, entries: readonly TaskNote[], message: string): Promise<string> {
  const git = withoutHooks(context);
  const scratch = await mkdtemp(join(tmpdir(), "waymark-notes-"));
  try {
    for (let attempt = 1; ; attempt++) {
      try {
        return await writeOnce(git, scratch, entries, message);
      } catch (error) {
        if (!(error instanceof RefMoved) || attempt >= WRITE_ATTEMPTS) throw error;
        await new Promise((resolve) => setTimeout(resolve, 5 + Math.floor(Math.random() * 20 * Math.min(attempt, 8))));
      }
    }
  } finally {
    await rm(scratch, { recursive: true, force: true });
  }
}

async function writeOnce(git: GitContext, scratch: string, entries: readonly TaskNote[], message: string): Promise<string> {
  const refs = await notesRefs(git);
  const local = refs.find((r) => r.ref === NOTES_REF)?.commit ?? null;
  // Remote-tracking copies the local ref does not contain yet are merged in (pushing is then a fast-forward).
  const incoming: string[] = [];
  for (const { ref, commit } of refs) {
    if (ref === NOTES_REF || commit === local || incoming.includes(commit)) continue;
    if (local === null || !(await gitIsAncestor(git, commit, local))) incoming.push(commit);
  }
  const base = local ?? incoming.shift() ?? null;
  const notes = base ? await noteBlobs(git, base) : new Map<string, { path: string; blob: string }>();
  // Per annotated commit: the blobs whose texts make its note (the base's, and any other copy's that differs).
  const parts = new Map<string, { path: string; blobs: string[] }>();
  for (const [commit, { path, blob }] of notes) parts.set(commit, { path, blobs: [blob] });
  for (const other of incoming) {
    for (const [commit, { path, blob }] of await noteBlobs(git, other)) {
      const known = parts.get(commit);
      if (!known) parts.set(commit, { path, blobs: [blob] });
      else if (!known.blobs.includes(blob)) known.blobs.push(blob);
    }
  }
  const byCommit = new Map<string, TaskNote[]>();
  for (const entry of entries) byCommit.set(entry.commit, [...(byCommit.get(entry.commit) ?? []), entry]);
  const changed = [...parts].filter(([commit, part]) => byCommit.has(commit) || part.blobs.length > 1).map(([commit]) => commit);
  for (const commit of byCommit.keys()) if (!parts.has(commit)) changed.push(commit);
  const texts = await readBlobs(
    git,
    changed.flatMap((commit) => parts.get(commit)?.blobs ?? []),
  );
  const written: { commit: string; path: string; text: string }[] = changed.map((commit) => {
    const part = parts.get(commit);
    const existing = (part?.blobs ?? []).map((blob) => texts.get(blob) ?? "").join("\n");
    return { commit, path: part?.path ?? commit, text: mergeNote(existing || null, byCommit.get(commit) ?? []) };
  });
  const files = await Promise.all(
    written.map(async (note, i) => {
      const file = join(scratch, `note-${i}`);
      await writeFile(file, note.text);
      return file;
    }),
  );
  const blobs =
    files.length === 0
      ? []
      : (await runGit(git, ["hash-object", "-w", "--no-filters", "--stdin-paths"], Buffer.from(files.map((f) => `${f}\n`).join(""))))
          .toString("utf8")
          .trim()
          .split("\n");
  const index: GitContext = { ...git, env: { ...git.env, GIT_INDEX_FILE: join(scratch, "index") } };
  await rm(join(scratch, "index"), { force: true });
  await runGit(index, base ? ["read-tree", `${base}^{tree}`] : ["read-tree", "--empty"]);
  // Notes only a merged copy had are added at their paths; the changed ones replaced where they were.
  const info: string[] = [];
  for (const [commit, part] of parts)
    if (!notes.has(commit) && !changed.includes(commit)) info.push(`100644 ${part.blobs[0]}\t${part.path}`);
  written.forEach((note, i) => {
    info.push(`100644 ${blobs[i]}\t${note.path}`);
  });
  if (info.length > 0) await runGit(index, ["update-index", "--index-info"], Buffer.from(`${info.join("\n")}\n`));
  const tree = (await runGit(index, ["write-tree"])).toString("utf8").trim();
  const parents = [...(base ? [base] : []), ...incoming].flatMap((parent) => ["-p", parent]);
  const commit = (
    await runGit({ ...git, env: { ...git.env, ...IDENTITY } }, ["commit-tree", "--no-gpg-sign", tree, ...parents, "-m", message])
  )
    .toString("utf8")
    .trim();
  try {
    await runGit(git, ["update-ref", "-m", message, NOTES_REF, commit, local ?? ZERO]);
  } catch (error) {
    if (error instanceof GitError) throw new RefMoved(error.message);
    throw error;
  }
  return commit;
}
