/**
 * Lists bound in chunks (storage/chunks): every chunk is at most the bound, the chunks hold every
 * item once and in order, each names its first and last item, and a list written in one go is
 * cut exactly where item by item would cut it.
 */
import { describe, expect, it } from "vitest";
import { jsonChunkItems, jsonChunks } from "../../src/storage/chunks";

const utf8 = (text: string) => new TextEncoder().encode(text).length;

/** The rule written out item by item: a chunk ends before the item that would take it past `max` bytes. */
function byItem(items: readonly unknown[], max: number): string[] {
  const chunks: string[][] = [];
  let bytes = 2;
  for (const item of items) {
    const json = JSON.stringify(item);
    const last = chunks.at(-1);
    if (!last || bytes + utf8(json) + 1 > max) {
      chunks.push([json]);
      bytes = 2 + utf8(json) + 1;
    } else {
      last.push(json);
      bytes += utf8(json) + 1;
    }
  }
  return chunks.map((parts) => `[${parts.join(",")}]`);
}

describe("lists bound in chunks", () => {
  it("cut where item by item cuts them, at and around the bound, in three-byte characters too", () => {
    for (const text of ["a", "語"]) {
      for (let count = 1; count <= 40; count++) {
        const items = Array.from({ length: count }, (_, n) => [n, `${text.repeat(n % 7)}/${n}`]);
        const whole = utf8(JSON.stringify(items));
        for (const max of [whole - 1, whole, whole + 1, whole + 2, Math.ceil(whole / 3), 40]) {
          const chunks = [...jsonChunkItems(items, max)];
          expect(chunks.map((c) => c.json)).toEqual(byItem(items, max));
          expect([...jsonChunks(items, max)]).toEqual(byItem(items, max));
          // Every item once, in order; each chunk names its first and last.
          expect(chunks.flatMap((c) => JSON.parse(c.json))).toEqual(items);
          for (const chunk of chunks) {
            const held = JSON.parse(chunk.json) as unknown[];
            expect([chunk.first, chunk.last]).toEqual([held[0], held.at(-1)]);
            if (held.length > 1) expect(utf8(chunk.json)).toBeLessThan(max);
          }
        }
      }
    }
  });

  it("write nothing for no items, and take any iterable", () => {
    expect([...jsonChunkItems([], 100)]).toEqual([]);
    expect([...jsonChunks(new Set(["a", "b"]), 100)]).toEqual(['["a","b"]']);
  });
});
