import { createHash } from "node:crypto";
import type { Dirent, Stats } from "node:fs";
import { lstat, readdir } from "node:fs/promises";
import { join } from "node:path";
import type { Transition } from "@waymark/protocol/wire";
import { gitMode, hashPath, isMissing, mapLimit } from "./hash.js";
import type { ChecksumEntry, LocalChecksumSnapshot } from "./local.js";

// Snapshot of a directory that is not a git repository: path -> {mode, blob}. The full
// list stays on the machine; only its size and digest go to the edge.

const HASH_CONCURRENCY = 32;
/** Below this much elapsed time a scan stays silent on stderr. */
const PROGRESS_AFTER_MS = 1500;
/**
 * A file whose mtime is this close to the previous scan may have been written again
 * within the same timestamp granularity after that scan: re-hash it (git's "racy" rule).
 */
const RACY_WINDOW_MS = 2000;

export type ScanOptions = {
  /** A previous scan of the same directory: files with unchanged (mtime, size) keep their blob id. */
  previous?: LocalChecksumSnapshot | null;
  /** Where progress lines go for a long scan (default: nowhere). */
  progress?: (line: string) => void;
  /** How long a scan stays silent before reporting progress. */
  progressAfterMs?: number;
};

type Found = { path: string; abs: string; stats: Stats };

async function walk(root: string): Promise<Found[]> {
  const found: Found[] = [];
  const pending: string[] = [""];
  while (pending.length > 0) {
    const batch = pending.splice(0, pending.length);
    await mapLimit(batch, HASH_CONCURRENCY, async (rel) => {
      let dirents: Dirent[];
      try {
        dirents = await readdir(rel === "" ? root : join(root, rel), {
          withFileTypes: true,
        });
      } catch (error) {
        if (isMissing(error)) return;
        throw error;
      }
      const files = dirents.filter((d) => d.name !== ".git");
      await Promise.all(
        files.map(async (d) => {
          const path = rel === "" ? d.name : `${rel}/${d.name}`;
          if (d.isDirectory()) {
            pending.push(path);
            return;
          }
          if (!d.isFile() && !d.isSymbolicLink()) return;
          const abs = join(root, path);
          try {
            found.push({ path, abs, stats: await lstat(abs) });
          } catch (error) {
            if (!isMissing(error)) throw error;
          }
        }),
      );
    });
  }
  return found;
}

export async function scanDirectory(root: string, options: ScanOptions = {}): Promise<LocalChecksumSnapshot> {
  const startedAt = Date.now();
  const previous = options.previous?.root === root ? options.previous : null;
  const found = await walk(root);
  let hashed = 0;
  let lastReport = startedAt;
  const report = (final: boolean): void => {
    const now = Date.now();
    if (!options.progress || now - startedAt < (options.progressAfterMs ?? PROGRESS_AFTER_MS)) return;
    if (!final && now - lastReport < 1000) return;
    lastReport = now;
    options.progress(`waymark: checksum scan of ${root}: ${hashed}/${found.length} files hashed${final ? ", done" : ""}`);
  };
  const entries: Record<string, ChecksumEntry> = {};
  await mapLimit(found, HASH_CONCURRENCY, async ({ path, abs, stats }) => {
    const mode = gitMode(stats);
    if (mode === null) return;
    const before = previous?.entries[path];
    if (
      before &&
      before.mode === mode &&
      before.size === stats.size &&
      before.mtimeMs === stats.mtimeMs &&
      stats.mtimeMs < previous.scanned_at - RACY_WINDOW_MS
    ) {
      entries[path] = before;
      return;
    }
    const state = await hashPath(abs, stats);
    hashed++;
    report(false);
    if (state)
      entries[path] = {
        mode: state.mode,
        blob: state.blob,
        size: stats.size,
        mtimeMs: stats.mtimeMs,
      };
  });
  report(true);
  const sorted: Record<string, ChecksumEntry> = {};
  const digest = createHash("sha256");
  for (const path of Object.keys(entries).sort()) {
    const entry = entries[path] as ChecksumEntry;
    sorted[path] = entry;
    digest.update(`${entry.mode} ${entry.blob} ${path}\0`);
  }
  return {
    type: "checksum",
    files: Object.keys(sorted).length,
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
