/**
 * @module export-diff
 * Field-by-field comparison of an exported value with the value its events give, worded for a
 * reviewer: `tasks[tk_…].status: export says "success", its events say "failed"`.
 *
 * A task's event names only its first files when the whole record would not fit one stored value
 * (files_changed.more, verification.more: the edge's bound, src/domain/stored-files.ts), while
 * the export lists every file. Such a task is compared list by list on the files its event names,
 * and by count on the rest: the names of those are covered by the signature, not by the events.
 */
import { changedPaths, type Json, type JsonObject } from "./export-rebuild";

const SHOWN_CHARACTERS = 80;

/** A value as a reviewer reads it in a message: JSON, clipped. */
export function show(value: Json | undefined): string {
  if (value === undefined) return "nothing";
  const text = JSON.stringify(value);
  return text.length > SHOWN_CHARACTERS ? `${text.slice(0, SHOWN_CHARACTERS - 1)}…` : text;
}

const isObject = (value: Json | undefined): value is JsonObject => value !== null && typeof value === "object" && !Array.isArray(value);

/** Deep equality of JSON values; key order does not matter. */
export function sameJson(left: Json | undefined, right: Json | undefined): boolean {
  if (left === right) return true;
  if (Array.isArray(left) && Array.isArray(right)) return left.length === right.length && left.every((item, i) => sameJson(item, right[i]));
  if (isObject(left) && isObject(right)) {
    const keys = Object.keys(left).filter((key) => left[key] !== undefined);
    if (keys.length !== Object.keys(right).filter((key) => right[key] !== undefined).length) return false;
    return keys.every((key) => sameJson(left[key], right[key]));
  }
  return false;
}

/** Who gives the derived value, in the messages: the events (the default) or a device's signed data. */
export interface Source {
  /** "its events say" */
  says: string;
  /** "its events" (… lists N item(s)) */
  lists: string;
}
const EVENTS: Source = { says: "its events say", lists: "its events" };

/** Appends one line per field where `exported` and `derived` differ, named by its path. */
export function diffValues(path: string, exported: Json | undefined, derived: Json | undefined, out: string[], by: Source = EVENTS): void {
  if (sameJson(exported, derived)) return;
  if (isObject(exported) && isObject(derived)) {
    for (const key of new Set([...Object.keys(exported), ...Object.keys(derived)]))
      diffValues(`${path}.${key}`, exported[key], derived[key], out, by);
    return;
  }
  if (Array.isArray(exported) && Array.isArray(derived)) {
    if (exported.length === derived.length) {
      exported.forEach((item, i) => {
        diffValues(`${path}[${i}]`, item, derived[i], out, by);
      });
      return;
    }
    const at = exported.findIndex((item, i) => !sameJson(item, derived[i]));
    // No difference in the common part: the first item one side has and the other lacks.
    const first = at < 0 ? Math.min(exported.length, derived.length) : at;
    out.push(
      `${path}: export lists ${exported.length} item(s), ${by.lists} ${derived.length} (first difference at [${first}]: export says ${show(exported[first])}, ${by.says} ${show(derived[first])})`,
    );
    return;
  }
  out.push(`${path}: export says ${show(exported)}, ${by.says} ${show(derived)}`);
}

/** How much of a task its event names, when it names only part of its files or overlaps. */
export interface PartlyNamed {
  files: { named: number; total: number } | null;
  overlaps: { named: number; total: number } | null;
}

const FILE_LISTS = ["added", "modified", "deleted", "renamed", "uncommitted", "lines", "not_by_agent_tools"] as const;

/** The path an item of a file list is about: a rename by the path it left, a line count by its path. */
function itemPath(item: Json): string | null {
  if (typeof item === "string") return item;
  if (isObject(item)) {
    const path = item.from ?? item.path;
    return typeof path === "string" ? path : null;
  }
  return null;
}

const byCodeUnits = (left: string, right: string) => (left < right ? -1 : left > right ? 1 : 0);

/**
 * Compares an exported task with one state of it from its events. Returns what the event names
 * only in part (null members when it names everything).
 */
export function diffTask(path: string, exported: JsonObject, derived: JsonObject, out: string[]): PartlyNamed {
  const files = isObject(derived.files_changed) && derived.files_changed.more !== undefined ? derived.files_changed : null;
  const verification = isObject(derived.verification) && derived.verification.more !== undefined ? derived.verification : null;
  if (!files && !verification) {
    diffValues(path, exported, derived, out);
    return { files: null, overlaps: null };
  }
  const partly: PartlyNamed = { files: null, overlaps: null };
  for (const key of new Set([...Object.keys(exported), ...Object.keys(derived)])) {
    if (key === "files_changed" && files) partly.files = diffNamedFiles(`${path}.files_changed`, exported.files_changed, files, out);
    else if (key === "verification" && verification) {
      const named = new Set(changedPaths(derived));
      partly.overlaps = diffNamedVerification(`${path}.verification`, exported.verification, verification, named, out);
    } else diffValues(`${path}.${key}`, exported[key], derived[key], out);
  }
  return partly;
}

/** files_changed whose event names the first files in path order and counts the rest (`more`). */
function diffNamedFiles(path: string, exported: Json | undefined, derived: JsonObject, out: string[]): PartlyNamed["files"] {
  const named = new Set(changedPaths({ files_changed: derived }));
  const more = typeof derived.more === "number" ? derived.more : 0;
  const total = named.size + more;
  if (!isObject(exported)) {
    out.push(`${path}: export says ${show(exported)}, its events list ${total} changed file(s)`);
    return { named: named.size, total };
  }
  for (const key of new Set([...Object.keys(exported), ...Object.keys(derived)])) {
    if (key === "more" || (FILE_LISTS as readonly string[]).includes(key)) continue;
    diffValues(`${path}.${key}`, exported[key], derived[key], out);
  }
  const all = changedPaths({ files_changed: exported });
  if (all.length !== total) {
    out.push(`${path}: export lists ${all.length} changed file(s), its events name ${named.size} and count ${more} more`);
  }
  const first = [...all].sort(byCodeUnits).slice(0, named.size);
  const stranger = first.find((p) => !named.has(p));
  if (stranger !== undefined) {
    out.push(`${path}: ${show(stranger)} is among the export's first ${named.size} files in path order, but its events do not name it`);
  }
  for (const list of FILE_LISTS) {
    const ours = exported[list];
    const theirs = derived[list];
    if (!Array.isArray(ours) || !Array.isArray(theirs)) {
      diffValues(`${path}.${list}`, ours, theirs, out);
      continue;
    }
    const onNamed = ours.filter((item) => named.has(itemPath(item) ?? ""));
    diffValues(`${path}.${list} (of the ${named.size} files its events name)`, onNamed, theirs, out);
  }
  return { named: named.size, total };
}

/** verification whose event names the unexpected files among its named files, and its first overlaps, and counts the rest. */
function diffNamedVerification(
  path: string,
  exported: Json | undefined,
  derived: JsonObject,
  named: ReadonlySet<string>,
  out: string[],
): PartlyNamed["overlaps"] {
  const more = isObject(derived.more) ? derived.more : {};
  if (!isObject(exported)) {
    diffValues(path, exported, derived, out);
    return null;
  }
  for (const key of new Set([...Object.keys(exported), ...Object.keys(derived)])) {
    if (key === "more" || key === "unexpected_files" || key === "overlapping") continue;
    diffValues(`${path}.${key}`, exported[key], derived[key], out);
  }
  const unexpected = Array.isArray(exported.unexpected_files) ? exported.unexpected_files : [];
  const onNamed = unexpected.filter((item) => typeof item === "string" && named.has(item));
  diffValues(`${path}.unexpected_files (of the files its events name)`, onNamed, derived.unexpected_files, out);
  const counted = typeof more.unexpected_files === "number" ? more.unexpected_files : 0;
  if (unexpected.length - onNamed.length !== counted) {
    out.push(
      `${path}.unexpected_files: export lists ${unexpected.length - onNamed.length} beyond the files its events name, its events count ${counted}`,
    );
  }
  const ours = Array.isArray(exported.overlapping) ? exported.overlapping : undefined;
  const theirs = Array.isArray(derived.overlapping) ? derived.overlapping : undefined;
  if (ours === undefined || theirs === undefined) {
    diffValues(`${path}.overlapping`, exported.overlapping, derived.overlapping, out);
    return null;
  }
  diffValues(`${path}.overlapping (the first ${theirs.length}, which its events name)`, ours.slice(0, theirs.length), theirs, out);
  const total = theirs.length + (typeof more.overlapping === "number" ? more.overlapping : 0);
  if (ours.length !== total)
    out.push(`${path}.overlapping: export lists ${ours.length}, its events name ${theirs.length} and count ${total - theirs.length} more`);
  return total > theirs.length ? { named: theirs.length, total } : null;
}
