/**
 * @module account/work-search
 * get_workflow's `query`: search past work by words (the memory index) and by file path (the
 * path index), so an agent can ask "which task touched src/billing/tax.ts?".
 *
 * A query is read as a path when it says so (`path:` then the path, which may hold spaces: no
 * word search then), or when it is one word that looks like a path: it contains a "/" or ends
 * in a file extension. A path finds itself and everything under it (`src/billing` finds the
 * folder's files, never `src/billing.ts`); a trailing `*` finds every path starting with what
 * precedes it. Paths are matched in their wire form (packages/protocol/src/paths.ts); a name
 * that is not UTF-8 may be given in that escaped form (`/src/caf%E9.txt`) or as people see it
 * (`src/caf\xE9.txt`).
 *
 * File hits come first, newest first (they answer the question exactly), then word hits fill
 * the remaining places in their ranking order.
 */
import { decodeWirePath, encodePathBytes, isEscapedPath } from "@waymark/protocol/paths";
import type { MemoryHit, MemoryIndex } from "./memory";
import type { PathHit, PathIndex } from "./path-index";

/** How a query is searched in the path index. */
export interface PathQuery {
  /** The path in its wire form. */
  path: string;
  /** `*`: every path starting with `path`. Otherwise the path itself and everything under it. */
  prefix: boolean;
  /** Given with `path:`: no word search. */
  explicit: boolean;
}

/** A path some task changed: the answer to "which task touched this file?". */
export interface FileHit {
  kind: "file";
  workflow_id: string;
  task_id: string;
  task_name: string;
  path: string;
  /** A, M, D or R (the new name of a rename; the old name is listed as D). */
  status: string;
  /** When the task recorded the change. */
  at: string;
}

export type WorkHit = MemoryHit | FileHit;

export interface WorkSearchResult {
  /** How the word search matched: every word, or (nothing had every word) any. */
  match: "all" | "any";
  results: WorkHit[];
}

const EXPLICIT = /^path:/i;
const FILE_EXTENSION = /\.[A-Za-z][A-Za-z0-9]{0,9}$/;
const DISPLAYED_BYTE = /\\x([89A-Fa-f][0-9A-Fa-f])/;
const utf8 = new TextEncoder();

/** The path a query names, or null when it reads as words only. */
export function pathQuery(query: string): PathQuery | null {
  const trimmed = query.trim();
  const explicit = EXPLICIT.test(trimmed);
  const raw = explicit ? trimmed.slice("path:".length).trim() : trimmed;
  if (!explicit && (/\s/.test(raw) || !(raw.includes("/") || FILE_EXTENSION.test(raw)))) return null;
  const prefix = raw.endsWith("*");
  // A folder's trailing "/" is implied: a path finds everything under it anyway.
  const typed = prefix ? raw.replace(/\*+$/, "") : raw.replace(/\/+$/, "");
  const path = wirePath(typed.replace(/^(\.\/)+/, ""));
  return path === "" ? null : { path, prefix, explicit };
}

/**
 * A typed path in its wire form: `\xE9` (how pages and git show a byte that is not UTF-8) back
 * to the escaped form, an escaped form written for a UTF-8 name (or a leading "/") to text.
 */
function wirePath(typed: string): string {
  if (DISPLAYED_BYTE.test(typed)) {
    const bytes: number[] = [];
    for (const [index, part] of typed.split(DISPLAYED_BYTE).entries()) {
      // split() with a capturing group alternates text and the captured hex digits.
      if (index % 2 === 1) bytes.push(Number.parseInt(part, 16));
      else bytes.push(...utf8.encode(part));
    }
    return encodePathBytes(Uint8Array.from(bytes));
  }
  if (!isEscapedPath(typed)) return typed;
  const bytes = decodeWirePath(typed);
  return bytes === null ? typed : encodePathBytes(bytes);
}

/** File hits first (newest first), then word hits, `limit` in all. */
export function mergeHits(files: readonly PathHit[], words: readonly MemoryHit[], limit: number): WorkHit[] {
  const fileHits: WorkHit[] = files.slice(0, limit).map((hit) => ({
    kind: "file",
    workflow_id: hit.workflow_id,
    task_id: hit.task_id,
    task_name: hit.task_name,
    path: hit.path,
    status: hit.status,
    at: hit.at,
  }));
  return [...fileHits, ...words.slice(0, limit - fileHits.length)];
}

export class WorkSearch {
  constructor(
    private readonly memory: MemoryIndex,
    private readonly paths: PathIndex,
  ) {}

  /** Past work matching `query`: files its tasks changed, then tasks, decisions, issues, workflows. */
  search(query: string, limit: number): WorkSearchResult {
    const asPath = pathQuery(query);
    const files = asPath ? this.paths.findUnder(asPath.path, asPath.prefix, limit) : [];
    if (asPath?.explicit) return { match: "all", results: mergeHits(files, [], limit) };
    const words = this.memory.search(query, limit);
    return { match: words.match, results: mergeHits(files, words.results, limit) };
  }
}
