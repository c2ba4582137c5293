/**
 * @module agents/codex-patch
 * Codex's `apply_patch` format (./codex.ts reads its tool calls with it): the files a patch touches,
 * from its headers (`*** Add File:`, `*** Update File:`, `*** Delete File:`, `*** Move to:`; paths as
 * the patch names them, relative to the session's working directory or absolute), and the patch read
 * as line edits: the patch its hook payload carries (or a shell command carries,
 * `apply_patch <<'EOF' …`) split per file, and an update's chunks applied to a
 * file's content the way Codex applies them (each chunk's `@@ context` line, then its old lines,
 * sought from where the last chunk ended: exactly, then ignoring trailing, then surrounding
 * whitespace, then typographic punctuation; end-of-file chunks sought from the end; the result
 * ends with a newline). The line attribution replays these on the content it knows, so an edit
 * lands where Codex put it even when the file changed since the patch was written.
 */

export type PatchChunk = {
  /** The `@@ <line>` the chunk is placed after, if it names one. */
  context: string | null;
  old: string[];
  new: string[];
  /** `*** End of File`: the chunk's old lines end the file. */
  endOfFile: boolean;
};

export type PatchFile =
  | { kind: "add"; path: string; content: string }
  | { kind: "delete"; path: string }
  | { kind: "update"; path: string; moveTo: string | null; chunks: PatchChunk[] };

const BEGIN = "*** Begin Patch";
const END = "*** End Patch";
const ADD = "*** Add File: ";
const DELETE = "*** Delete File: ";
const UPDATE = "*** Update File: ";
const MOVE = "*** Move to: ";
const END_OF_FILE = "*** End of File";

const HEADER = /^\*\*\* (?:(?:Add|Update|Delete) File|Move to): (.+?)\s*$/gm;

/** Whether a shell command carries a patch (`apply_patch <<'EOF'` run through the shell). */
export function hasPatch(text: string): boolean {
  return text.includes(BEGIN);
}

/** The paths a patch names, in order, without repeats. */
export function patchPaths(patch: string): string[] {
  const paths = new Set<string>();
  for (const match of patch.matchAll(HEADER)) if (match[1]) paths.add(match[1]);
  return [...paths];
}

/** The patch inside a tool input or shell command (between its Begin and End lines), or null. */
export function patchText(text: string): string | null {
  const begin = text.indexOf(BEGIN);
  if (begin < 0) return null;
  const end = text.indexOf(END, begin);
  return end < 0 ? text.slice(begin) : text.slice(begin, end + END.length);
}

/** The files a patch touches, in order; a malformed section ends the reading (what came before stays). */
export function parsePatch(text: string): PatchFile[] {
  const lines = text.split("\n").map((line) => line.replace(/\r$/, ""));
  const files: PatchFile[] = [];
  let at = lines.findIndex((line) => line.trim() === BEGIN);
  if (at < 0) return files;
  at++;
  while (at < lines.length) {
    const line = lines[at] as string;
    if (line.trim() === END) break;
    if (line.startsWith(ADD)) {
      const path = line.slice(ADD.length).trim();
      const added: string[] = [];
      at++;
      while (at < lines.length && (lines[at] as string).startsWith("+")) added.push((lines[at++] as string).slice(1));
      files.push({ kind: "add", path, content: added.length === 0 ? "" : `${added.join("\n")}\n` });
    } else if (line.startsWith(DELETE)) {
      files.push({ kind: "delete", path: line.slice(DELETE.length).trim() });
      at++;
    } else if (line.startsWith(UPDATE)) {
      const path = line.slice(UPDATE.length).trim();
      at++;
      let moveTo: string | null = null;
      if (at < lines.length && (lines[at] as string).startsWith(MOVE)) moveTo = (lines[at++] as string).slice(MOVE.length).trim();
      const chunks: PatchChunk[] = [];
      while (at < lines.length && !(lines[at] as string).startsWith("*** ")) {
        const read = readChunk(lines, at, chunks.length === 0);
        if (!read) return files;
        chunks.push(read.chunk);
        at = read.next;
      }
      files.push({ kind: "update", path, moveTo, chunks });
    } else if (line.trim() === "") {
      at++;
    } else {
      break;
    }
  }
  return files;
}

/** One chunk from `at`: its `@@` line (optional for the first chunk), then its lines. */
function readChunk(lines: readonly string[], at: number, first: boolean): { chunk: PatchChunk; next: number } | null {
  let context: string | null = null;
  const header = lines[at] as string;
  if (header === "@@") at++;
  else if (header.startsWith("@@ ")) {
    context = header.slice(3);
    at++;
  } else if (!first) return null;
  const chunk: PatchChunk = { context, old: [], new: [], endOfFile: false };
  let read = 0;
  while (at < lines.length) {
    const line = lines[at] as string;
    if (line === END_OF_FILE) {
      chunk.endOfFile = true;
      at++;
      break;
    }
    if (line.startsWith("@@") || line.startsWith("*** ")) break;
    const mark = line[0];
    if (line === "" || mark === " ") {
      const text = line.slice(1);
      chunk.old.push(text);
      chunk.new.push(text);
    } else if (mark === "-") chunk.old.push(line.slice(1));
    else if (mark === "+") chunk.new.push(line.slice(1));
    else if (read === 0) return null;
    else break;
    read++;
    at++;
  }
  return read === 0 && !chunk.endOfFile ? null : { chunk, next: at };
}

/** Typographic characters Codex reads as their ASCII forms when nothing else matched. */
const PUNCTUATION: Record<string, string> = {
  "\u2010": "-",
  "\u2011": "-",
  "\u2012": "-",
  "\u2013": "-",
  "\u2014": "-",
  "\u2015": "-",
  "\u2212": "-",
  "\u2018": "'",
  "\u2019": "'",
  "\u201a": "'",
  "\u201b": "'",
  "\u201c": '"',
  "\u201d": '"',
  "\u201e": '"',
  "\u201f": '"',
  "\u00a0": " ",
  "\u2002": " ",
  "\u2003": " ",
  "\u2009": " ",
  "\u202f": " ",
  "\u3000": " ",
};
const normalized = (line: string) => [...line.trim()].map((c) => PUNCTUATION[c] ?? c).join("");

const LOOSENESS: readonly ((line: string) => string)[] = [(line) => line, (line) => line.trimEnd(), (line) => line.trim(), normalized];

/** Where `pattern` starts in `lines` at or after `from` (from the end for an end-of-file chunk), or -1. */
function seek(lines: readonly string[], pattern: readonly string[], from: number, endOfFile: boolean): number {
  if (pattern.length === 0) return from;
  if (pattern.length > lines.length) return -1;
  const start = endOfFile ? lines.length - pattern.length : from;
  for (const form of LOOSENESS) {
    const wanted = pattern.map(form);
    for (let i = start; i <= lines.length - pattern.length; i++) {
      let match = true;
      for (let j = 0; j < wanted.length && match; j++) match = form(lines[i + j] as string) === wanted[j];
      if (match) return i;
    }
  }
  return -1;
}

/** `content` with the chunks applied as Codex applies them, or null when a chunk cannot be placed. */
export function applyChunks(content: string, chunks: readonly PatchChunk[]): string | null {
  const lines = content.split("\n");
  if (lines.at(-1) === "") lines.pop();
  const replacements: { at: number; remove: number; insert: string[] }[] = [];
  let index = 0;
  for (const chunk of chunks) {
    if (chunk.context !== null) {
      const found = seek(lines, [chunk.context], index, false);
      if (found < 0) return null;
      index = found + 1;
    }
    if (chunk.old.length === 0) {
      replacements.push({ at: lines.length, remove: 0, insert: chunk.new });
      continue;
    }
    let pattern = chunk.old;
    let insert = chunk.new;
    let found = seek(lines, pattern, index, chunk.endOfFile);
    // A trailing empty line stands for the file's final newline: sought again without it.
    if (found < 0 && pattern.at(-1) === "") {
      pattern = pattern.slice(0, -1);
      if (insert.at(-1) === "") insert = insert.slice(0, -1);
      found = seek(lines, pattern, index, chunk.endOfFile);
    }
    if (found < 0) return null;
    replacements.push({ at: found, remove: pattern.length, insert });
    index = found + pattern.length;
  }
  replacements.sort((a, b) => a.at - b.at);
  for (const { at, remove, insert } of replacements.reverse()) lines.splice(at, remove, ...insert);
  if (lines.at(-1) !== "") lines.push("");
  return lines.join("\n");
}
