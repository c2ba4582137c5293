/**
 * @module checksum
 * Snapshot of a directory git does not track: path -> {mode, blob} for every file, names
 * read as bytes. The full list stays on the machine; only its size and digest go to the edge.
 *
 * The walk and the hashing are synchronous: for many small files, one thread reading in a
 * tight loop beats thousands of promises through the thread pool several times over. The
 * event loop gets a turn every few milliseconds so the MCP connection stays responsive.
 */
import { createHash } from "node:crypto";
import { closeSync, type Dirent, fstatSync, lstatSync, openSync, readdirSync, readlinkSync, readSync, type Stats } from "node:fs";
import { sep } from "node:path";
import { encodePathBytes } from "@waymark/protocol/paths";
import type { Transition } from "@waymark/protocol/wire";
import { gitMode, isMissing } from "./hash.js";
import type { ChecksumEntry, ChecksumList, LocalChecksumSnapshot } from "./local.js";

/** Below this much elapsed time a scan stays silent on stderr. */
const PROGRESS_AFTER_MS = 1500;
/**
 * A file whose mtime is this close to the previous scan may have been written again
 * within the same timestamp granularity after that scan: re-hash it (git's "racy" rule).
 */
const RACY_WINDOW_MS = 2000;
/** How long the scan holds the thread before letting other work (the MCP connection) run. */
const SLICE_MS = 50;
const CHUNK = 1024 * 1024;
const GIT_DIR_NAME = Buffer.from(".git");

export type ScanOptions = {
  /** A previous scan of the same directory: files whose stat data did not move keep their blob id. */
  previous?: LocalChecksumSnapshot | null;
  /** Where progress lines go for a long scan (default: nowhere). */
  progress?: (line: string) => void;
  /** How long a scan stays silent before reporting progress. */
  progressAfterMs?: number;
};

const chunkBuffer = Buffer.allocUnsafe(CHUNK);

type Hashed = { blob: string; stats: Stats };

/**
 * git's blob id of a regular file's content and the stat data of what was read (from the open
 * file, so no second lookup by name), in chunks so a huge file never sits in memory whole.
 */
function hashFile(path: string | Buffer): Hashed | null {
  let fd: number;
  try {
    fd = openSync(path, "r");
  } catch (error) {
    if (isMissing(error)) return null;
    throw error;
  }
  try {
    const stats = fstatSync(fd);
    const hash = createHash("sha1").update(`blob ${stats.size}\0`);
    let remaining = stats.size;
    while (remaining > 0) {
      const read = readSync(fd, chunkBuffer, 0, Math.min(CHUNK, remaining), null);
      if (read === 0) break;
      hash.update(chunkBuffer.subarray(0, read));
      remaining -= read;
    }
    return { blob: hash.digest("hex"), stats };
  } finally {
    closeSync(fd);
  }
}

function hashLink(path: string | Buffer): Hashed | null {
  try {
    const stats = lstatSync(path);
    const target = readlinkSync(path, { encoding: "buffer" });
    return { blob: createHash("sha1").update(`blob ${target.length}\0`).update(target).digest("hex"), stats };
  } catch (error) {
    if (isMissing(error)) return null;
    throw error;
  }
}

/** Same file, same content as far as the stat data can tell: git's rule (mtime, ctime, inode, size, mode). */
function unchanged(before: ChecksumEntry, stats: Stats, mode: string, previousScan: number): boolean {
  return (
    before.mode === mode &&
    before.size === stats.size &&
    before.mtimeMs === stats.mtimeMs &&
    before.ctimeMs === stats.ctimeMs &&
    before.ino === stats.ino &&
    stats.mtimeMs < previousScan - RACY_WINDOW_MS
  );
}

const yieldToEventLoop = () => new Promise<void>((resolve) => setImmediate(resolve));

/** One directory's entries: names as text (fast), or as bytes when one is not valid UTF-8. */
type Listing = { dirents: Dirent<string>[]; bytes: false } | { dirents: Dirent<Buffer>[]; bytes: true };

function list(dir: string | Buffer): Listing | null {
  try {
    const dirents = readdirSync(dir, { withFileTypes: true });
    // Node decodes names as UTF-8 with replacement: a U+FFFD may stand for bytes that are not UTF-8.
    if (!dirents.some((dirent) => dirent.name.includes("\ufffd"))) return { dirents, bytes: false };
    return { dirents: readdirSync(dir, { withFileTypes: true, encoding: "buffer" }), bytes: true };
  } catch (error) {
    if (isMissing(error)) return null;
    throw error;
  }
}

function join2(parent: string | Buffer, name: string | Buffer, separator: string): string | Buffer {
  if (typeof parent === "string" && typeof name === "string") return parent === "" ? name : `${parent}${separator}${name}`;
  const parentBytes = typeof parent === "string" ? Buffer.from(parent) : parent;
  const nameBytes = typeof name === "string" ? Buffer.from(name) : name;
  return parentBytes.length === 0 ? nameBytes : Buffer.concat([parentBytes, Buffer.from(separator), nameBytes]);
}

/** A directory being walked: its absolute and repo-relative paths ("" at the root), and its entries in walk order. */
type Frame = { abs: string | Buffer; rel: string | Buffer; dirents: (Dirent<string> | Dirent<Buffer>)[]; next: number };

/**
 * A directory's entries in the order that makes a depth-first walk visit files in path order:
 * a subdirectory sorts as its name followed by "/", so "a.txt" < "a/…" < "a0", as the full paths
 * do. With names as text the walk is then already sorted and needs no sort of the whole list.
 */
function walkOrder(listing: Listing): (Dirent<string> | Dirent<Buffer>)[] {
  const kept: (Dirent<string> | Dirent<Buffer>)[] = [];
  for (const dirent of listing.dirents) {
    const name = dirent.name;
    if (typeof name === "string" ? name !== ".git" : !name.equals(GIT_DIR_NAME)) kept.push(dirent);
  }
  if (listing.bytes) return kept;
  const keys = (kept as Dirent<string>[]).map((dirent) => (dirent.isDirectory() ? `${dirent.name}/` : dirent.name));
  const order = Array.from(keys, (_, index) => index).sort((left, right) => ((keys[left] as string) < (keys[right] as string) ? -1 : 1));
  return order.map((index) => kept[index] as Dirent<string>);
}

/**
 * Where `path` is in a scan's sorted paths, looked for from `from` (the walk visits paths in
 * order, so the next one is almost always there), else by binary search; -1 when absent.
 */
function indexOf(paths: readonly string[], path: string, from: number): number {
  if (paths[from] === path) return from;
  let low = 0;
  let high = paths.length - 1;
  while (low <= high) {
    const middle = (low + high) >>> 1;
    const found = paths[middle] as string;
    if (found === path) return middle;
    if (found < path) low = middle + 1;
    else high = middle - 1;
  }
  return -1;
}

export async function scanDirectory(root: string, options: ScanOptions = {}): Promise<LocalChecksumSnapshot> {
  const startedAt = Date.now();
  const previous = options.previous?.root === root ? options.previous : null;
  const paths: string[] = [];
  const entries: ChecksumEntry[] = [];
  // A name that is not UTF-8 is escaped as a whole path, which the walk order does not follow.
  let sortNeeded = false;
  let cursor = 0;
  let seen = 0;
  let hashed = 0;
  let lastReport = startedAt;
  let sliceStart = startedAt;
  const report = (final: boolean): void => {
    const now = Date.now();
    if (!options.progress || now - startedAt < (options.progressAfterMs ?? PROGRESS_AFTER_MS)) return;
    if (!final && now - lastReport < 1000) return;
    lastReport = now;
    options.progress(`waymark: checksum scan of ${root}: ${hashed}/${seen} files hashed${final ? ", done" : ""}`);
  };
  const open = (abs: string | Buffer, rel: string | Buffer): Frame | null => {
    const listing = list(abs);
    if (listing === null) return null;
    if (listing.bytes) sortNeeded = true;
    return { abs, rel, dirents: walkOrder(listing), next: 0 };
  };
  const stack: Frame[] = [];
  const top = open(root, "");
  if (top) stack.push(top);
  while (stack.length > 0) {
    const frame = stack[stack.length - 1] as Frame;
    const dirent = frame.dirents[frame.next++];
    if (dirent === undefined) {
      stack.pop();
      continue;
    }
    const abs = join2(frame.abs, dirent.name, sep);
    const rel = join2(frame.rel, dirent.name, "/");
    if (dirent.isDirectory()) {
      const child = open(abs, rel);
      if (child) stack.push(child);
      continue;
    }
    const link = dirent.isSymbolicLink();
    if (!dirent.isFile() && !link) continue;
    seen++;
    const key = typeof rel === "string" ? rel : encodePathBytes(rel);
    const known = previous ? indexOf(previous.paths, key, cursor) : -1;
    if (previous && known >= 0) {
      cursor = known + 1;
      const before = previous.entries[known] as ChecksumEntry;
      let stats: Stats;
      try {
        stats = lstatSync(abs);
      } catch (error) {
        if (isMissing(error)) continue;
        throw error;
      }
      const mode = gitMode(stats);
      if (mode !== null && unchanged(before, stats, mode, previous.scanned_at)) {
        paths.push(key);
        entries.push(before);
        continue;
      }
    }
    const result = link ? hashLink(abs) : hashFile(abs);
    const mode = result ? gitMode(result.stats) : null;
    hashed++;
    if (result && mode !== null) {
      const { stats } = result;
      paths.push(key);
      entries.push({ mode, blob: result.blob, size: stats.size, mtimeMs: stats.mtimeMs, ctimeMs: stats.ctimeMs, ino: stats.ino });
    }
    if (Date.now() - sliceStart > SLICE_MS) {
      report(false);
      await yieldToEventLoop();
      sliceStart = Date.now();
    }
  }
  report(true);
  const sorted = sortNeeded ? sortByPath(paths, entries) : { paths, entries };
  return {
    type: "checksum",
    files: sorted.paths.length,
    digest: scanDigest(sorted.paths, sorted.entries),
    root,
    scanned_at: startedAt,
    paths: sorted.paths,
    entries: sorted.entries,
  };
}

function sortByPath(paths: readonly string[], entries: readonly ChecksumEntry[]): { paths: string[]; entries: ChecksumEntry[] } {
  const order = Array.from(paths, (_, index) => index).sort((left, right) => ((paths[left] as string) < (paths[right] as string) ? -1 : 1));
  return { paths: order.map((index) => paths[index] as string), entries: order.map((index) => entries[index] as ChecksumEntry) };
}

/** SHA-256 of every "mode blob path\0" line in path order: what the edge is told of the list. */
function scanDigest(paths: readonly string[], entries: readonly ChecksumEntry[]): string {
  // The input in pieces: one string of every line would be tens of MB.
  const digest = createHash("sha256");
  let lines = "";
  for (let index = 0; index < paths.length; index++) {
    const entry = entries[index] as ChecksumEntry;
    lines += `${entry.mode} ${entry.blob} ${paths[index]}\0`;
    if (lines.length > 65_536) {
      digest.update(lines);
      lines = "";
    }
  }
  return digest.update(lines).digest("hex");
}

/** A/M/D transitions between two scans (mode or content change is a modification), in path order. */
export function compareScans(before: ChecksumList, after: ChecksumList): Transition[] {
  const transitions: Transition[] = [];
  let left = 0;
  let right = 0;
  while (left < before.paths.length || right < after.paths.length) {
    const leftPath = before.paths[left];
    const rightPath = after.paths[right];
    if (rightPath === undefined || (leftPath !== undefined && leftPath < rightPath)) {
      const { mode, blob } = before.entries[left++] as ChecksumEntry;
      transitions.push({ path: leftPath as string, before: { mode, blob }, after: null });
    } else if (leftPath === undefined || rightPath < leftPath) {
      const { mode, blob } = after.entries[right++] as ChecksumEntry;
      transitions.push({ path: rightPath, before: null, after: { mode, blob } });
    } else {
      const b = before.entries[left++] as ChecksumEntry;
      const a = after.entries[right++] as ChecksumEntry;
      if (b.mode !== a.mode || b.blob !== a.blob) {
        transitions.push({ path: rightPath, before: { mode: b.mode, blob: b.blob }, after: { mode: a.mode, blob: a.blob } });
      }
    }
  }
  return transitions;
}

const MODES = new Set(["100644", "100755", "120000"]);
const BLOB_ID = /^[0-9a-f]{40}$/;
const DIGEST = /^[0-9a-f]{64}$/;

function entryProblem(value: unknown, name: string): string | null {
  if (!value || typeof value !== "object") return `${name} must be an object`;
  const entry = value as Record<string, unknown>;
  if (typeof entry.mode !== "string" || !MODES.has(entry.mode)) return `${name}.mode must be one of ${[...MODES].join(", ")}`;
  if (typeof entry.blob !== "string" || !BLOB_ID.test(entry.blob)) return `${name}.blob must be a 40-digit lowercase hex blob id`;
  for (const field of ["size", "mtimeMs", "ctimeMs", "ino"] as const) {
    const optional = field === "ctimeMs" || field === "ino";
    if (optional && entry[field] === undefined) continue;
    if (typeof entry[field] !== "number" || !Number.isFinite(entry[field])) return `${name}.${field} must be a finite number`;
  }
  return null;
}

/**
 * A checksum scan read back from JSON, checked field by field: the CLI's form (`entries` an
 * object keyed by path, as `waymark snapshot` prints it and the scan cache keeps it) or the
 * helper's own (`paths` and `entries` side by side, in a task record). A string names the first
 * problem. Entries are put in path order: an object's integer-like keys come back first.
 */
export function checksumScanFromJson(value: unknown): LocalChecksumSnapshot | string {
  if (!value || typeof value !== "object") return "a snapshot must be a JSON object";
  const scan = value as Record<string, unknown>;
  if (scan.type !== "checksum") return 'type must be "checksum"';
  if (typeof scan.root !== "string") return "root must be a string";
  if (typeof scan.scanned_at !== "number" || !Number.isFinite(scan.scanned_at)) return "scanned_at must be a number";
  if (typeof scan.digest !== "string" || !DIGEST.test(scan.digest)) return "digest must be a 64-digit lowercase hex SHA-256";
  let paths: string[];
  let entries: ChecksumEntry[];
  if (Array.isArray(scan.paths) && Array.isArray(scan.entries)) {
    if (scan.paths.length !== scan.entries.length) return "paths and entries must have the same length";
    if (!scan.paths.every((path) => typeof path === "string")) return "paths must be strings";
    paths = scan.paths as string[];
    entries = scan.entries as ChecksumEntry[];
  } else if (scan.entries && typeof scan.entries === "object" && !Array.isArray(scan.entries)) {
    const byPath = scan.entries as Record<string, ChecksumEntry>;
    paths = Object.keys(byPath);
    entries = paths.map((path) => byPath[path] as ChecksumEntry);
  } else {
    return "entries must be an object keyed by path";
  }
  for (let index = 0; index < paths.length; index++) {
    const problem = entryProblem(entries[index], `entries[${JSON.stringify(paths[index])}]`);
    if (problem) return problem;
  }
  let ordered = true;
  for (let index = 1; index < paths.length && ordered; index++) ordered = (paths[index - 1] as string) < (paths[index] as string);
  const list = ordered ? { paths, entries } : sortByPath(paths, entries);
  for (let index = 1; index < list.paths.length; index++) {
    if (list.paths[index - 1] === list.paths[index]) return `paths must not repeat (${JSON.stringify(list.paths[index])})`;
  }
  const snapshot: LocalChecksumSnapshot = {
    type: "checksum",
    files: list.paths.length,
    digest: scan.digest,
    root: scan.root,
    scanned_at: scan.scanned_at,
    paths: list.paths,
    entries: list.entries,
  };
  if (Array.isArray(scan.warnings) && scan.warnings.every((warning) => typeof warning === "string")) snapshot.warnings = scan.warnings;
  return snapshot;
}
