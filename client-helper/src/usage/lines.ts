/**
 * @module usage/lines
 * The lines of a JSONL file (an agent's transcript), read in a fixed amount of memory whatever
 * the file holds: a line longer than the bound is skipped as it streams past, never assembled,
 * so a transcript of one huge line without a newline costs at most the bound plus one read
 * buffer. The path comes from the agent's hook payload: it is read, never trusted.
 */
import { open } from "node:fs/promises";

const CHUNK_BYTES = 64 * 1024;

/** Every line of at most `maxLineBytes` bytes (without its newline), in order; longer lines are left out. */
export async function* boundedLines(path: string, maxLineBytes: number): AsyncGenerator<string> {
  const file = await open(path, "r");
  try {
    const chunk = Buffer.allocUnsafe(CHUNK_BYTES);
    let parts: Buffer[] = [];
    let length = 0;
    // In a line already longer than the bound: everything up to its newline is dropped.
    let skipping = false;
    for (;;) {
      const { bytesRead } = await file.read(chunk, 0, CHUNK_BYTES, null);
      if (bytesRead === 0) break;
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
