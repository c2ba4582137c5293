/**
 * @module init/blocks
 * Waymark's part of a file the user owns, as a marked block: the lines from a begin marker
 * to an end marker, in the file's own comment syntax. Writing replaces the block in place
 * (or appends it after one newline); removing takes out the block and that newline, so a
 * file gets back exactly the bytes it had. Nothing outside the markers is ever changed.
 */

export type Markers = { begin: string; end: string };

export const MARKDOWN_MARKERS: Markers = { begin: "<!-- waymark:begin", end: "<!-- waymark:end -->" };
export const TOML_MARKERS: Markers = { begin: "# waymark:begin", end: "# waymark:end" };

/** Where the block sits: [start of its begin line, end of its end line including the newline]. */
function locate(content: string, markers: Markers): { start: number; end: number } | null {
  const lines = content.split("\n");
  let offset = 0;
  let start = -1;
  for (const line of lines) {
    const next = offset + line.length + 1;
    if (start < 0 && line.startsWith(markers.begin)) start = offset;
    else if (start >= 0 && line.startsWith(markers.end)) return { start, end: Math.min(next, content.length) };
    offset = next;
  }
  return null;
}

export function hasBlock(content: string, markers: Markers): boolean {
  return locate(content, markers) !== null;
}

/** The text between the markers (without them), or null. */
export function blockBody(content: string, markers: Markers): string | null {
  const found = locate(content, markers);
  if (!found) return null;
  const lines = content.slice(found.start, found.end).replace(/\n$/, "").split("\n");
  return lines.slice(1, -1).join("\n");
}

/** `block` is the whole block, markers included, without a trailing newline. */
export function upsertBlock(content: string | null, block: string): string {
  const markers = markersOf(block);
  const current = content ?? "";
  const found = locate(current, markers);
  if (found) return `${current.slice(0, found.start)}${block}\n${current.slice(found.end)}`;
  return current === "" ? `${block}\n` : `${current}\n${block}\n`;
}

/** The content without the block; null when nothing else is left (the file was Waymark's alone). */
export function removeBlock(content: string, markers: Markers): string | null {
  const found = locate(content, markers);
  if (!found) return content;
  const before = content.slice(0, found.start);
  const after = content.slice(found.end);
  if (after === "") {
    // The block was appended after exactly one newline: take that newline back.
    const rest = before.endsWith("\n") ? before.slice(0, -1) : before;
    return rest === "" ? null : rest;
  }
  // The user wrote after the block: take out the blank line init put before it, if it is still there.
  return `${before.endsWith("\n\n") ? before.slice(0, -1) : before}${after}`;
}

/**
 * The content with the block's lines replaced by `text` (whole lines, ending in a line break);
 * an empty `text` removes the block as removeBlock does.
 */
export function replaceBlock(content: string, markers: Markers, text: string): string | null {
  const found = locate(content, markers);
  if (!found) return content;
  if (text === "") return removeBlock(content, markers);
  const before = content.slice(0, found.start);
  // Text that opens with a blank line needs no second one: init put one before the block.
  const kept = text.startsWith("\n") && before.endsWith("\n\n") ? before.slice(0, -1) : before;
  return `${kept}${text}${content.slice(found.end)}`;
}

function markersOf(block: string): Markers {
  for (const markers of [MARKDOWN_MARKERS, TOML_MARKERS]) if (block.startsWith(markers.begin)) return markers;
  throw new Error("a Waymark block must start with a known begin marker");
}
