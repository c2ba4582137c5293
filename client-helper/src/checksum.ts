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
import type { ChecksumEntry, LocalChecksumSnapshot } from "./local.js";

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

/** A directory to walk: its absolute path and its repo-relative wire path ("" at the root), as text or bytes. */
type Pending = { abs: string | Buffer; rel: string | Buffer };

function join2(parent: string | Buffer, name: string | Buffer, separator: string): string | Buffer {
  if (typeof parent === "string" && typeof name === "string") return parent === "" ? name : `${parent}${separator}${name}`;
  const parentBytes = typeof parent === "string" ? Buffer.from(parent) : parent;
  const nameBytes = typeof name === "string" ? Buffer.from(name) : name;
  return parentBytes.length === 0 ? nameBytes : Buffer.concat([parentBytes, Buffer.from(separator), nameBytes]);
}

export async function scanDirectory(root: string, options: ScanOptions = {}): Promise<LocalChecksumSnapshot> {
  const startedAt = Date.now();
  const previous = options.previous?.root === root ? options.previous : null;
  // Paths and their entries side by side, put in path order once at the end.
  const paths: string[] = [];
  const found: ChecksumEntry[] = [];
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
  const pending: Pending[] = [{ abs: root, rel: "" }];
  while (pending.length > 0) {
    const { abs: dirAbs, rel: dirRel } = pending.pop() as Pending;
    const listing = list(dirAbs);
    if (listing === null) continue;
    for (const dirent of listing.dirents) {
      const name = dirent.name;
      if (typeof name === "string" ? name === ".git" : name.equals(GIT_DIR_NAME)) continue;
      const abs = join2(dirAbs, name, sep);
      const rel = join2(dirRel, name, "/");
      if (dirent.isDirectory()) {
        pending.push({ abs, rel });
        continue;
      }
      const link = dirent.isSymbolicLink();
      if (!dirent.isFile() && !link) continue;
      const key = typeof rel === "string" ? rel : encodePathBytes(rel);
      const before = previous?.entries[key];
      if (before && previous) {
        let stats: Stats;
        try {
          stats = lstatSync(abs);
        } catch (error) {
          if (isMissing(error)) continue;
          throw error;
        }
        const mode = gitMode(stats);
        if (mode !== null && unchanged(before, stats, mode, previous.scanned_at)) {
          seen++;
          paths.push(key);
          found.push(before);
          continue;
        }
      }
      const result = link ? hashLink(abs) : hashFile(abs);
      const mode = result ? gitMode(result.stats) : null;
      seen++;
      hashed++;
      if (result && mode !== null) {
        const { stats } = result;
        paths.push(key);
        found.push({ mode, blob: result.blob, size: stats.size, mtimeMs: stats.mtimeMs, ctimeMs: stats.ctimeMs, ino: stats.ino });
      }
      if (Date.now() - sliceStart > SLICE_MS) {
        report(false);
        await yieldToEventLoop();
        sliceStart = Date.now();
      }
    }
  }
  report(true);
  const order = Array.from(paths, (_, index) => index).sort((left, right) => ((paths[left] as string) < (paths[right] as string) ? -1 : 1));
  const sorted: Record<string, ChecksumEntry> = {};
  // The digest's input in pieces: one string of every line would be tens of MB.
  const digest = createHash("sha256");
  let lines = "";
  for (const index of order) {
    const path = paths[index] as string;
    const entry = found[index] as ChecksumEntry;
    sorted[path] = entry;
    lines += `${entry.mode} ${entry.blob} ${path}\0`;
    if (lines.length > 65_536) {
      digest.update(lines);
      lines = "";
    }
  }
  return {
    type: "checksum",
    files: paths.length,
    digest: digest.update(lines).digest("hex"),
    root,
    scanned_at: startedAt,
    entries: sorted,
  };
}

/** A/M/D transitions between two scans (mode or content change is a modification). */
export function compareScans(before: Record<string, ChecksumEntry>, after: Record<string, ChecksumEntry>): Transition[] {
  const transitions: Transition[] = [];
  const paths = new Set([...Object.keys(before), ...Object.keys(after)]);
  for (const path of [...paths].sort()) {
    const b = before[path];
    const a = after[path];
    if (b && a && b.mode === a.mode && b.blob === a.blob) continue;
    transitions.push({
      path,
      before: b ? { mode: b.mode, blob: b.blob } : null,
      after: a ? { mode: a.mode, blob: a.blob } : null,
    });
  }
  return transitions;
}
