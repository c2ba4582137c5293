/**
 * @module truncation
 * Lists too large to send: the helper keeps each within its ceilings and counts the rest per
 * directory (the wire's `truncated`), and the edge reads that summary back.
 */
import type { ChangeStatus } from "./attribution";
import { comparePaths, decodeWirePath, ESCAPED_PATH_PREFIX, encodePathBytes, isEscapedPath } from "./paths";
import type { Changes, Truncation } from "./wire";
import { WIRE_LIMITS } from "./wire-constants";

/** The summary of what the helper could not list, if anything. */
export function truncationOf(changes: Changes | null | undefined): Truncation | undefined {
  return changes?.type === "net" ? changes.truncated : undefined;
}

/**
 * Keeps a list of changes within the helper's ceilings (WIRE_LIMITS.HELPER_LIST_ENTRIES entries,
 * `maxBytes` of serialized entries): the first ones in path order are listed, the rest are
 * counted per directory. The directory depth is the deepest (up to 3 segments) that names at
 * most WIRE_LIMITS.TRUNCATED_DIRECTORIES directories; beyond those, the largest are named and
 * the rest counted in `other`.
 */
export function limitChanges<Entry extends { path: string; status: ChangeStatus }>(
  entries: readonly Entry[],
  sizeOf: (entry: Entry) => number,
  maxBytes: number = WIRE_LIMITS.HELPER_LIST_BYTES,
  maxEntries: number = WIRE_LIMITS.HELPER_LIST_ENTRIES,
): { listed: Entry[]; truncated?: Truncation } {
  let bytes = 0;
  let count = 0;
  while (count < entries.length && count < maxEntries) {
    bytes += sizeOf(entries[count] as Entry);
    if (bytes > maxBytes) break;
    count++;
  }
  if (count === entries.length) return { listed: [...entries] };
  const omitted = entries.slice(count);
  return { listed: entries.slice(0, count), truncated: summariseByDirectory(omitted) };
}

type DirectoryCounts = { path: string; added: number; modified: number; deleted: number };

function summariseByDirectory(omitted: readonly { path: string; status: ChangeStatus }[]): Truncation {
  let groups = new Map<string, DirectoryCounts>();
  for (let depth = 3; depth >= 1; depth--) {
    groups = new Map();
    for (const entry of omitted) {
      const directory = directoryOf(entry.path, depth);
      let counts = groups.get(directory);
      if (counts === undefined) {
        counts = { path: directory, added: 0, modified: 0, deleted: 0 };
        groups.set(directory, counts);
      }
      if (entry.status === "A") counts.added++;
      else if (entry.status === "D") counts.deleted++;
      else counts.modified++;
    }
    if (groups.size <= WIRE_LIMITS.TRUNCATED_DIRECTORIES) break;
  }
  const total = (counts: DirectoryCounts) => counts.added + counts.modified + counts.deleted;
  const byCount = [...groups.values()].sort((left, right) => total(right) - total(left) || comparePaths(left.path, right.path));
  const named = byCount.slice(0, WIRE_LIMITS.TRUNCATED_DIRECTORIES).sort((left, right) => comparePaths(left.path, right.path));
  const other = byCount.slice(WIRE_LIMITS.TRUNCATED_DIRECTORIES).reduce((sum, counts) => sum + total(counts), 0);
  return { omitted: omitted.length, directories: named, other };
}

/** The first `depth` directory segments of a file's path ("" for a file at the root). */
function directoryOf(path: string, depth: number): string {
  const escaped = isEscapedPath(path);
  const start = escaped ? ESCAPED_PATH_PREFIX.length : 0;
  let end = -1;
  for (let segment = 0; segment < depth; segment++) {
    const next = path.indexOf("/", Math.max(end + 1, start));
    if (next < 0) break;
    end = next;
  }
  if (end < 0) return "";
  if (!escaped) return path.slice(0, end);
  // A directory of a name that is not UTF-8 may itself be valid UTF-8: give it its one wire form.
  const bytes = decodeWirePath(path.slice(0, end));
  return bytes === null ? "" : encodePathBytes(bytes);
}
