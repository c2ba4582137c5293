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
const SLASH = Buffer.from("/");

export type ScanOptions = {
  /** A previous scan of the same directory: files whose stat data did not move keep their blob id. */
  previous?: LocalChecksumSnapshot | null;
  /** Where progress lines go for a long scan (default: nowhere). */
  progress?: (line: string) => void;
  /** How long a scan stays silent before reporting progress. */
  progressAfterMs?: number;
};

const chunkBuffer = Buffer.allocUnsafe(CHUNK);

/** git's blob id of a file's content, read in chunks so a huge file never sits in memory whole. */
function hashFile(path: Buffer): string | null {
  let fd: number;
  try {
    fd = openSync(path, "r");
  } catch (error) {
    if (isMissing(error)) return null;
    throw error;
  }
  try {
    // The size git hashes is the size read; fstat of the open file is the one that matches it.
    const length = fstatSync(fd).size;
    const hash = createHash("sha1").update(`blob ${length}\0`);
    let remaining = length;
    while (remaining > 0) {
      const read = readSync(fd, chunkBuffer, 0, Math.min(CHUNK, remaining), null);
      if (read === 0) break;
      hash.update(chunkBuffer.subarray(0, read));
      remaining -= read;
    }
    return hash.digest("hex");
  } finally {
    closeSync(fd);
  }
}

function blobOf(path: Buffer, mode: string): string | null {
  if (mode !== "120000") return hashFile(path);
  try {
    const target = readlinkSync(path, { encoding: "buffer" });
    return createHash("sha1").update(`blob ${target.length}\0`).update(target).digest("hex");
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

export async function scanDirectory(root: string, options: ScanOptions = {}): Promise<LocalChecksumSnapshot> {
  const startedAt = Date.now();
  const previous = options.previous?.root === root ? options.previous : null;
  const rootBytes = Buffer.from(`${root}${sep}`);
  const entries = new Map<string, ChecksumEntry>();
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
  const pending: Buffer[] = [Buffer.alloc(0)];
  while (pending.length > 0) {
    const relative = pending.pop() as Buffer;
    let dirents: Dirent<Buffer>[];
    try {
      dirents = readdirSync(Buffer.concat([rootBytes, relative]), { withFileTypes: true, encoding: "buffer" });
    } catch (error) {
      if (isMissing(error)) continue;
      throw error;
    }
    for (const dirent of dirents) {
      if (dirent.name.equals(GIT_DIR_NAME)) continue;
      const path = relative.length === 0 ? dirent.name : Buffer.concat([relative, SLASH, dirent.name]);
      if (dirent.isDirectory()) {
        pending.push(path);
        continue;
      }
      if (!dirent.isFile() && !dirent.isSymbolicLink()) continue;
      const abs = Buffer.concat([rootBytes, path]);
      let stats: Stats;
      try {
        stats = lstatSync(abs);
      } catch (error) {
        if (isMissing(error)) continue;
        throw error;
      }
      const mode = gitMode(stats);
      if (mode === null) continue;
      seen++;
      const key = encodePathBytes(path);
      const before = previous?.entries[key];
      if (before && previous && unchanged(before, stats, mode, previous.scanned_at)) {
        entries.set(key, before);
      } else {
        const blob = blobOf(abs, mode);
        hashed++;
        if (blob !== null) {
          entries.set(key, { mode, blob, size: stats.size, mtimeMs: stats.mtimeMs, ctimeMs: stats.ctimeMs, ino: stats.ino });
        }
      }
      if (Date.now() - sliceStart > SLICE_MS) {
        report(false);
        await yieldToEventLoop();
        sliceStart = Date.now();
      }
    }
  }
  report(true);
  const sorted: Record<string, ChecksumEntry> = {};
  const digest = createHash("sha256");
  for (const path of [...entries.keys()].sort()) {
    const entry = entries.get(path) as ChecksumEntry;
    sorted[path] = entry;
    digest.update(`${entry.mode} ${entry.blob} ${path}\0`);
  }
  return {
    type: "checksum",
    files: entries.size,
    digest: digest.digest("hex"),
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
