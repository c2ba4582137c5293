/**
 * @module file-stamp
 * A file's identity and version as its stat data gives them (device, inode, size, modification
 * and change times in nanoseconds), for answers the helper keeps while the files they were read
 * from are unchanged. A file changed within RACY_MS of now may change again within the same
 * timestamp tick without its stat data showing it (git's "racily clean" rule for its index):
 * callers keep nothing read from such a file.
 */
import { statSync } from "node:fs";

export const RACY_MS = 2000;

export type Stamp = { stamp: string; racy: boolean };

/** The stamp of `file` ("-" when it does not exist; a file that appears changes it too). */
export function fileStamp(file: string, now = Date.now()): Stamp {
  const info = statSync(file, { bigint: true, throwIfNoEntry: false });
  if (!info) return { stamp: "-", racy: false };
  const racy = now - Number(info.mtimeMs) < RACY_MS || now - Number(info.ctimeMs) < RACY_MS;
  return { stamp: `${info.dev}:${info.ino}:${info.size}:${info.mtimeNs}:${info.ctimeNs}`, racy };
}
