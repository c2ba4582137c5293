/**
 * @module init/json-file
 * Waymark's entries in a JSON configuration file the user owns (MCP servers, hooks). JSON
 * has no comments, so the entries themselves are the mark: the `waymark` server and the hook
 * entries whose command runs `waymark hook`. Edits keep every other key and entry where it
 * was, and keep the file's indentation and final newline.
 */

export type JsonObject = { [key: string]: unknown };

export function isObject(value: unknown): value is JsonObject {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** Parses a configuration file; a file that is not a JSON object is an error naming it. */
export function parseJsonFile(path: string, content: string | null): JsonObject {
  if (content === null || content.trim() === "") return {};
  let value: unknown;
  try {
    value = JSON.parse(content);
  } catch (error) {
    throw new Error(
      `${path} is not valid JSON (${error instanceof Error ? error.message : String(error)}); fix it, then run waymark init again`,
    );
  }
  if (!isObject(value)) throw new Error(`${path} must hold a JSON object`);
  return value;
}

/** Serializes with the indentation the file already used (two spaces for a new file). */
export function formatJson(value: JsonObject, previous: string | null): string {
  const indent = previous ? (/^[{[]\s*\n([ \t]+)\S/.exec(previous)?.[1] ?? "  ") : "  ";
  const newline = previous === null || previous.endsWith("\n") ? "\n" : "";
  return `${JSON.stringify(value, null, indent)}${newline}`;
}

/** The object at `key`, created when missing (a non-object there is an error naming the key). */
export function objectAt(parent: JsonObject, key: string, path: string): JsonObject {
  const value = parent[key];
  if (value === undefined) {
    const created: JsonObject = {};
    parent[key] = created;
    return created;
  }
  if (!isObject(value)) throw new Error(`${path}: "${key}" must be an object`);
  return value;
}

/** The array at `key`, created when missing. */
export function arrayAt(parent: JsonObject, key: string, path: string): unknown[] {
  const value = parent[key];
  if (value === undefined) {
    const created: unknown[] = [];
    parent[key] = created;
    return created;
  }
  if (!Array.isArray(value)) throw new Error(`${path}: "${key}" must be an array`);
  return value;
}

/**
 * Puts `entry` in `list` in place of the first entry `ours` recognises (dropping any other
 * of ours), or at the end when there is none.
 */
export function upsertEntry(list: unknown[], entry: unknown, ours: (item: unknown) => boolean): void {
  const index = list.findIndex(ours);
  if (index < 0) {
    list.push(entry);
    return;
  }
  list[index] = entry;
  for (let i = list.length - 1; i > index; i--) if (ours(list[i])) list.splice(i, 1);
}

/** Removes our entries; then the keys left empty by that removal. */
export function removeEntries(parent: JsonObject, key: string, ours: (item: unknown) => boolean): void {
  const list = parent[key];
  if (!Array.isArray(list)) return;
  const kept = list.filter((item) => !ours(item));
  if (kept.length === list.length) return;
  if (kept.length === 0) delete parent[key];
  else parent[key] = kept;
}

export function deleteIfEmpty(parent: JsonObject, key: string): void {
  const value = parent[key];
  if (isObject(value) && Object.keys(value).length === 0) delete parent[key];
}
