/**
 * @module notes/attribution
 * Who wrote each line, from the repository's Waymark notes (@waymark/protocol/git-note): the reader
 * `waymark blame`, `waymark notes carry` and `waymark verify --repo` share (and `waymark ci`).
 *
 * A line is looked up in the entries attached to the commit `git blame` names for it. An entry
 * written for that very commit is read directly. An entry a rewrite copied there (`git commit
 * --amend`, `git rebase` with notes.rewriteRef: the entry names another commit) is read through
 * the diff between the two: git's own when the original commit is still in the repository, else
 * the diff of the entry's line hashes against the file's lines here, so a clone that never had
 * the original places the lines the same way. A line the diff cannot carry back (the rewrite
 * changed it: a person's edit in an amend) is in no entry, so nobody's.
 */
import { lineHashes, lineHashesText, type ReadTaskNote } from "@waymark/protocol/git-note";
import { carryLine, type Hunk, type IndexedRecord, indexNoteEntry, type LineAuthorship, lookupEntry } from "@waymark/protocol/trace-blame";
import { pairHunks, readObjects } from "../git/blobs.js";
import type { GitContext } from "../git/process.js";
import { diffPairs } from "../lines/line-diff.js";
import { type NotesListing, type NotesRead, readNotes } from "./store.js";

/** A line as `git blame` names it: the commit that last touched it, its number and path there. */
export interface BlamedAt {
  commit: string;
  origLine: number;
  path: string;
}

type Indexed = { entry: ReadTaskNote; index: IndexedRecord };

const NOT_RECORDED: LineAuthorship = { who: "not_recorded" };

/** The notes of a repository, ready to attribute lines (load once, ask per file). */
export class NoteAttribution {
  private readonly byCommit = new Map<string, Indexed[]>();
  /** Hunks carrying a commit's path to the commit an entry names, keyed `commit\0original\0path` (null: cannot be carried). */
  private readonly carried = new Map<string, Hunk[] | null>();

  private constructor(
    private readonly context: GitContext,
    private readonly scratchRoot: string,
    read: NotesRead,
  ) {
    for (const [commit, note] of read.byCommit) {
      if (note.entries.length === 0) continue;
      this.byCommit.set(
        commit,
        note.entries.map((entry) => ({ entry, index: indexNoteEntry(entry.trace, entry.not_observed ?? []) })),
      );
    }
  }

  /** The notes of `commits` (all notes when omitted). `scratchRoot`: where a diff of line hashes runs (the helper's cache). */
  static async load(
    context: GitContext,
    scratchRoot: string,
    commits?: ReadonlySet<string>,
    listing?: NotesListing,
  ): Promise<NoteAttribution> {
    return new NoteAttribution(context, scratchRoot, await readNotes(context, commits, listing));
  }

  /** The entries attached to a commit. */
  entriesOf(commit: string): readonly ReadTaskNote[] {
    return (this.byCommit.get(commit) ?? []).map((indexed) => indexed.entry);
  }

  /** Every annotated commit and its entries. */
  *entries(): Iterable<[string, readonly ReadTaskNote[]]> {
    for (const [commit, list] of this.byCommit) yield [commit, list.map((indexed) => indexed.entry)];
  }

  get size(): number {
    return this.byCommit.size;
  }

  /**
   * Each line's authorship from the notes; undefined where its commit has no note (another
   * source may know it), "not recorded" where the notes of its commit do not hold it.
   */
  async attribute(lines: readonly BlamedAt[]): Promise<(LineAuthorship | undefined)[]> {
    await this.prepareCarries(lines);
    return lines.map((line) => {
      const entries = this.byCommit.get(line.commit);
      if (!entries) return undefined;
      for (const { entry, index } of entries) {
        let at: number | null = line.origLine;
        if (entry.commit !== line.commit) {
          const hunks = this.carried.get(`${line.commit}\0${entry.commit}\0${line.path}`);
          at = hunks ? carryLine(hunks, line.origLine) : null;
        }
        const who = at === null ? null : lookupEntry(index, line.path, at);
        if (who) return who;
      }
      return NOT_RECORDED;
    });
  }

  /** Reads the diffs that carry copied entries' lines to the commit they were written for. */
  private async prepareCarries(lines: readonly BlamedAt[]): Promise<void> {
    for (const line of lines) {
      for (const { entry } of this.byCommit.get(line.commit) ?? []) {
        const key = `${line.commit}\0${entry.commit}\0${line.path}`;
        if (entry.commit === line.commit || this.carried.has(key)) continue;
        const original = entry.line_hashes?.find((file) => file.path === line.path)?.hashes;
        this.carried.set(
          key,
          await hunksBetween(
            this.context,
            this.scratchRoot,
            line.path,
            { commit: line.commit },
            { commit: entry.commit, hashes: original },
          ),
        );
      }
    }
  }
}

/** One side of a diff of a file: a commit, and the file's line hashes there when the commit may be gone. */
export type Side = { commit: string; hashes?: string | undefined };

/**
 * The hunks of `path` from one commit to another: git's own diff when both are here, else the
 * diff of the two sides' line hashes (read from the note, or computed from git's content);
 * null when neither can be had.
 */
export async function hunksBetween(context: GitContext, scratchRoot: string, path: string, from: Side, to: Side): Promise<Hunk[] | null> {
  const fromGit = (await pairHunks(context, path, [[from.commit, to.commit]])).get(`${from.commit}\0${to.commit}`);
  if (fromGit) return fromGit;
  const texts: Buffer[] = [];
  for (const side of [from, to]) {
    if (side.hashes !== undefined) {
      texts.push(lineHashesText(side.hashes));
      continue;
    }
    const [content] = await readObjects(context, [`${side.commit}:${path}`]);
    if (!content) return null;
    texts.push(lineHashesText(lineHashes(content)));
  }
  const [hunks] = await diffPairs(scratchRoot, [[texts[0] as Buffer, texts[1] as Buffer]]);
  return (hunks ?? []).map((h) => [h.oldStart, h.oldCount, h.newStart, h.newCount] as Hunk);
}
