/**
 * @module git/porcelain
 * git's machine-readable formats, read and written as bytes: -z output is split at NUL and paths
 * become wire paths (@waymark/protocol/paths) without ever being decoded as UTF-8 on the way.
 * Status (porcelain v2), raw tree diffs, the index listing of `ls-files -v -s`, and the
 * --stdin-paths lines git reads.
 */
import { encodePathBytes } from "@waymark/protocol/paths";
import type { FileState, Transition } from "@waymark/protocol/wire";

export const NULL_SHA = "0000000000000000000000000000000000000000";
const NULL_MODE = "000000";
const NUL = 0;
const SPACE = 0x20;
const QUOTE = 0x22;
const BACKSLASH = 0x5c;

/**
 * A path as one line of --stdin-paths: as is, or C-quoted when a newline, a leading quote or
 * a trailing carriage return would otherwise change it (git unquotes lines that start with ").
 */
export function stdinPath(path: Uint8Array): Buffer {
  const bytes = Buffer.from(path);
  const needsQuotes = bytes.includes(0x0a) || bytes[0] === QUOTE || bytes[bytes.length - 1] === 0x0d;
  if (!needsQuotes) return bytes;
  const out: number[] = [QUOTE];
  for (const byte of bytes) {
    if (byte === QUOTE || byte === BACKSLASH) out.push(BACKSLASH, byte);
    else if (byte < 0x20 || byte === 0x7f) out.push(BACKSLASH, ...Buffer.from(byte.toString(8).padStart(3, "0")));
    else out.push(byte);
  }
  out.push(QUOTE);
  return Buffer.from(out);
}

/** Splits -z output into its NUL-terminated fields (bytes, never decoded). */
export function splitNul(out: Buffer): Buffer[] {
  const fields: Buffer[] = [];
  let start = 0;
  while (start < out.length) {
    let end = out.indexOf(NUL, start);
    if (end < 0) end = out.length;
    fields.push(out.subarray(start, end));
    start = end + 1;
  }
  return fields;
}

export type TrackedRecord = {
  kind: "tracked";
  xy: string;
  /** "N..." for a file, "S<c><m><u>" for a submodule (commit changed, modified, untracked). */
  submodule: string;
  headMode: string;
  indexMode: string;
  worktreeMode: string;
  headBlob: string;
  indexBlob: string;
  path: string;
};
export type UnmergedRecord = {
  kind: "unmerged";
  xy: string;
  submodule: string;
  /** Stage 2 ("ours") is the HEAD side of the conflicted operation. */
  oursMode: string;
  oursBlob: string;
  worktreeMode: string;
  path: string;
};
export type UntrackedRecord = { kind: "untracked"; path: string; directory: boolean };
export type StatusRecord = TrackedRecord | UnmergedRecord | UntrackedRecord;
export type StatusResult = {
  head: string | null;
  branch: string | null;
  records: StatusRecord[];
};

/** Splits off `count` space-separated ASCII fields; the rest of the record is the path (bytes, may hold spaces). */
function fields(record: Buffer, count: number): { parts: string[]; path: Buffer } {
  const parts: string[] = [];
  let start = 0;
  for (let i = 0; i < count; i++) {
    const space = record.indexOf(SPACE, start);
    if (space < 0) throw new Error(`unexpected git status record: ${JSON.stringify(record.toString("latin1"))}`);
    parts.push(record.toString("latin1", start, space));
    start = space + 1;
  }
  return { parts, path: record.subarray(start) };
}

export function parseStatus(out: Buffer): StatusResult {
  let head: string | null = null;
  let branch: string | null = null;
  const records: StatusRecord[] = [];
  for (const record of splitNul(out)) {
    if (record.length === 0) continue;
    switch (String.fromCharCode(record[0] as number)) {
      case "#": {
        const { parts, path: value } = fields(record, 2);
        // A branch name is shown, never compared: decoding it is harmless.
        const text = value.toString("utf8");
        if (parts[1] === "branch.oid") head = text === "(initial)" ? null : text;
        else if (parts[1] === "branch.head") branch = text === "(detached)" ? null : text;
        break;
      }
      case "1": {
        const { parts: f, path } = fields(record, 8);
        records.push({
          kind: "tracked",
          xy: f[1] ?? "",
          submodule: f[2] ?? "",
          headMode: f[3] ?? "",
          indexMode: f[4] ?? "",
          worktreeMode: f[5] ?? "",
          headBlob: f[6] ?? "",
          indexBlob: f[7] ?? "",
          path: encodePathBytes(path),
        });
        break;
      }
      case "u": {
        // u XY sub m1 m2 m3 mW h1 h2 h3 path (git's field names; stage 2 is "ours")
        const { parts: f, path } = fields(record, 10);
        records.push({
          kind: "unmerged",
          xy: f[1] ?? "",
          submodule: f[2] ?? "",
          oursMode: f[4] ?? "",
          worktreeMode: f[6] ?? "",
          oursBlob: f[8] ?? "",
          path: encodePathBytes(path),
        });
        break;
      }
      case "?": {
        const path = record.subarray(2);
        // An untracked nested repository is reported as "dir/": git would record a gitlink.
        const directory = path[path.length - 1] === 0x2f;
        records.push({ kind: "untracked", path: encodePathBytes(directory ? path.subarray(0, -1) : path), directory });
        break;
      }
      default:
        // "2" (renames) cannot appear with --no-renames and "!" not without --ignored;
        // anything else is a format this parser does not know, and guessing would be wrong.
        throw new Error(`unexpected git status record: ${JSON.stringify(record.toString("latin1"))}`);
    }
  }
  return { head, branch, records };
}

export function parseDiffRaw(out: Buffer): Transition[] {
  const tokens = splitNul(out);
  const transitions: Transition[] = [];
  for (let i = 0; i + 1 < tokens.length; i += 2) {
    const meta = (tokens[i] as Buffer).toString("latin1");
    if (!meta.startsWith(":")) throw new Error(`unexpected git diff record: ${JSON.stringify(meta)}`);
    const [srcMode, dstMode, srcSha, dstSha] = meta.slice(1).split(" ") as [string, string, string, string];
    transitions.push({
      path: encodePathBytes(tokens[i + 1] as Buffer),
      before: fileState(srcMode, srcSha),
      after: fileState(dstMode, dstSha),
    });
  }
  return transitions;
}

export function fileState(mode: string, sha: string): FileState | null {
  return mode === NULL_MODE || sha === NULL_SHA ? null : { mode, blob: sha };
}

/** An index entry whose worktree changes `git status` does not report. */
export type HiddenEntry = { path: string; flag: "skip-worktree" | "assume-unchanged"; index: FileState };

/**
 * Index entries flagged skip-worktree (`S`/`s`) or assume-unchanged (lowercase tag), from
 * `git ls-files -v -s -z` ("<tag> <mode> <object> <stage>\t<path>"). Unflagged entries (tag `H`)
 * are skipped without being decoded.
 */
export function parseHiddenEntries(out: Buffer): HiddenEntry[] {
  const hidden: HiddenEntry[] = [];
  let start = 0;
  while (start < out.length) {
    let end = out.indexOf(NUL, start);
    if (end < 0) end = out.length;
    const tag = out[start] as number;
    if (tag !== 0x48 /* H */) {
      const tab = out.indexOf(0x09, start);
      if (tab > start && tab < end) {
        const [tagText, mode, object, stage] = out.toString("latin1", start, tab).split(" ");
        const skip = tagText === "S" || tagText === "s";
        const assumed = tagText !== undefined && tagText !== tagText.toUpperCase();
        const state = mode && object ? fileState(mode, object) : null;
        if ((skip || assumed) && stage === "0" && state !== null) {
          hidden.push({
            path: encodePathBytes(out.subarray(tab + 1, end)),
            flag: skip ? "skip-worktree" : "assume-unchanged",
            index: state,
          });
        }
      }
    }
    start = end + 1;
  }
  return hidden;
}
