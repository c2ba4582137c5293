import { createHash } from "node:crypto";
import { createReadStream, lstatSync, readFileSync, readlinkSync, type Stats } from "node:fs";
import { lstat, readFile, readlink } from "node:fs/promises";
import type { FileState } from "@waymark/protocol/wire";

/** Files above this size are streamed so one huge file cannot exhaust memory. */
const STREAM_THRESHOLD = 8 * 1024 * 1024;

/** git's blob id: SHA-1 of "blob <len>\0" followed by the content. */
export function blobId(content: Buffer): string {
  return createHash("sha1").update(`blob ${content.length}\0`).update(content).digest("hex");
}

async function streamBlobId(path: string, size: number): Promise<string> {
  const hash = createHash("sha1").update(`blob ${size}\0`);
  for await (const chunk of createReadStream(path)) hash.update(chunk as Buffer);
  return hash.digest("hex");
}

/** The git mode a file on disk would be recorded with (core.fileMode semantics). */
export function gitMode(stats: Stats): string | null {
  if (stats.isSymbolicLink()) return "120000";
  if (stats.isFile()) return stats.mode & 0o100 ? "100755" : "100644";
  return null;
}

/**
 * The state of `path` on disk, or null when there is nothing git could record there
 * (missing, or not a file/symlink). A symlink hashes its target string, as git does.
 */
export async function hashPath(path: string, stats?: Stats): Promise<FileState | null> {
  let st = stats;
  if (!st) {
    try {
      st = await lstat(path);
    } catch (error) {
      if (isMissing(error)) return null;
      throw error;
    }
  }
  const mode = gitMode(st);
  if (mode === null) return null;
  try {
    if (mode === "120000")
      return {
        mode,
        blob: blobId(await readlink(path, { encoding: "buffer" })),
      };
    if (st.size > STREAM_THRESHOLD) return { mode, blob: await streamBlobId(path, st.size) };
    const content = await readFile(path);
    return { mode, blob: blobId(content) };
  } catch (error) {
    // Deleted between lstat and read: an agent is working in this tree right now.
    if (isMissing(error)) return null;
    throw error;
  }
}

/** Below this size a file is read synchronously: a few dirty files hash 4-5x faster than through the thread pool. */
const SYNC_THRESHOLD = 1024 * 1024;

/**
 * Like {@link hashPath}, for the handful of dirty files of a snapshot: small files are
 * read synchronously (blocking the event loop for microseconds each), large ones streamed.
 */
export async function hashPathQuick(path: string): Promise<FileState | null> {
  let st: Stats;
  try {
    st = lstatSync(path);
  } catch (error) {
    if (isMissing(error)) return null;
    throw error;
  }
  const mode = gitMode(st);
  if (mode === null || st.size > SYNC_THRESHOLD) return mode === null ? null : hashPath(path, st);
  try {
    const content = mode === "120000" ? readlinkSync(path, { encoding: "buffer" }) : readFileSync(path);
    return { mode, blob: blobId(content) };
  } catch (error) {
    if (isMissing(error)) return null;
    throw error;
  }
}

export function isMissing(error: unknown): boolean {
  const code = error instanceof Error && "code" in error ? (error as NodeJS.ErrnoException).code : undefined;
  return code === "ENOENT" || code === "ENOTDIR";
}

/** Runs `fn` over `items` with at most `limit` in flight, keeping order. */
export async function mapLimit<T, R>(items: readonly T[], limit: number, fn: (item: T) => Promise<R>): Promise<R[]> {
  const results = new Array<R>(items.length);
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < items.length) {
      const index = next++;
      results[index] = await fn(items[index] as T);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return results;
}
