/**
 * @module storage/chunks
 * Lists bound into a statement as one JSON array (read back with `json_each`) cost one statement
 * instead of one per item, but a bound parameter is a stored value to SQLite: past 2 MB it is
 * refused. A list of any length is therefore bound in chunks of at most
 * LIMITS.STATEMENT_CHUNK_BYTES, one statement each.
 */
import { utf8Length } from "../domain/stored-files";
import { LIMITS } from "../limits";

/** Up to this many items are first written as one array (past it, a list is more often over the bound than not). */
const ONE_GO_ITEMS = 1_000;

/** The items as JSON arrays of at most `maxBytes` each (an item larger than that is a chunk of its own). */
export function* jsonChunks<T>(items: Iterable<T>, maxBytes: number = LIMITS.STATEMENT_CHUNK_BYTES): Generator<string> {
  for (const chunk of jsonChunkItems(items, maxBytes)) yield chunk.json;
}

/** The same chunks, each with its first and last item (a chunk of rows in key order then knows its bounds). */
export function* jsonChunkItems<T>(
  items: Iterable<T>,
  maxBytes: number = LIMITS.STATEMENT_CHUNK_BYTES,
): Generator<{ json: string; first: T; last: T }> {
  // A few hundred items usually fit one chunk: written in one go, the same text as item by item
  // (what fits is exactly what the loop below would have kept together, so its bounds are the same).
  if (Array.isArray(items) && items.length > 0 && items.length <= ONE_GO_ITEMS) {
    const json = JSON.stringify(items);
    if (utf8Length(json) < maxBytes) {
      yield { json, first: items[0] as T, last: items[items.length - 1] as T };
      return;
    }
  }
  let parts: string[] = [];
  let bytes = 2;
  let first: T | undefined;
  let last: T | undefined;
  for (const item of items) {
    const json = JSON.stringify(item);
    const size = utf8Length(json) + 1;
    if (parts.length > 0 && bytes + size > maxBytes) {
      yield { json: `[${parts.join(",")}]`, first: first as T, last: last as T };
      parts = [];
      bytes = 2;
    }
    if (parts.length === 0) first = item;
    last = item;
    parts.push(json);
    bytes += size;
  }
  if (parts.length > 0) yield { json: `[${parts.join(",")}]`, first: first as T, last: last as T };
}
