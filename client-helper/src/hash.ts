/**
 * @module hash
 * git's identities of what is on disk, where no conversion applies: the blob id of raw bytes
 * and the mode git records for a file from its stat data (core.fileMode semantics); and where
 * on disk a wire path is.
 */
import { createHash } from "node:crypto";
import type { Stats } from "node:fs";
import { sep } from "node:path";
import { decodeWirePath } from "@waymark/protocol/paths";

/** git's blob id: SHA-1 of "blob <len>\0" followed by the content. */
export function blobId(content: Buffer): string {
  return createHash("sha1").update(`blob ${content.length}\0`).update(content).digest("hex");
}

/** The git mode a file on disk would be recorded with (core.fileMode semantics). */
export function gitMode(stats: Stats): string | null {
  if (stats.isSymbolicLink()) return "120000";
  if (stats.isFile()) return stats.mode & 0o100 ? "100755" : "100644";
  return null;
}

export function isMissing(error: unknown): boolean {
  const code = error instanceof Error && "code" in error ? (error as NodeJS.ErrnoException).code : undefined;
  return code === "ENOENT" || code === "ENOTDIR";
}

/** A wire path on this machine's file system (bytes, so names that are not UTF-8 are found). */
export function fsPath(root: string, path: string): Buffer {
  return Buffer.concat([Buffer.from(`${root}${sep}`), decodeWirePath(path) ?? Buffer.alloc(0)]);
}
