/**
 * @module usage/lines
 * The lines of a JSONL file (an agent's transcript), read in a fixed amount of memory whatever
 * the file holds: a line longer than the bound is skipped as it streams past, never assembled,
 * so a transcript of one huge line without a newline costs at most the bound plus one read
 * buffer. The path comes from the agent's hook payload: it is read, never trusted.
 */
import { open } from "node:fs/promises";

const CHUNK_BYTES = 64 * 1024;

/**
 * Where a read starts (a byte offset), moved past every whole line it reads: a file still being
 * written is read on from there, each line once (a last line without its newline is read again,
 * whole, next time).
 */
export type LineCursor = { offset: number };

/**
 * Every line of at most `maxLineBytes` bytes (without its newline), in order; longer lines are
 * left out. From `cursor`'s offset when given (else the start), which it moves on.
 */
export async function* boundedLines(path: string, maxLineBytes: number, cursor?: LineCursor): AsyncGenerator<string> {
  const file = await open(path, "r");
  try {
    const chunk = Buffer.allocUnsafe(CHUNK_BYTES);
    let position = cursor?.offset ?? 0;
    let parts: Buffer[] = [];
    let length = 0;
    // In a line already longer than the bound: everything up to its newline is dropped.
    let skipping = false;
    for (;;) {
      const { bytesRead } = await file.read(chunk, 0, CHUNK_BYTES, position);
      if (bytesRead === 0) break;
      const chunkStart = position;
      position += bytesRead;
      let from = 0;
      while (from < bytesRead) {
        const newline = chunk.indexOf(10, from);
        const end = newline < 0 || newline >= bytesRead ? bytesRead : newline;
        if (!skipping) {
          if (length + (end - from) > maxLineBytes) {
            skipping = true;
            parts = [];
            length = 0;
          } else if (end > from) {
            parts.push(Buffer.from(chunk.subarray(from, end)));
            length += end - from;
          }
        }
        if (end === bytesRead) break;
        if (cursor) cursor.offset = chunkStart + end + 1;
        if (!skipping) yield Buffer.concat(parts, length).toString("utf8").replace(/\r$/, "");
        skipping = false;
        parts = [];
        length = 0;
        from = end + 1;
      }
    }
    if (!skipping && length > 0) yield Buffer.concat(parts, length).toString("utf8").replace(/\r$/, "");
  } finally {
    await file.close();
  }
}
