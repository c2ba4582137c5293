// The implementation this replaced, kept verbatim as the oracle of test/domain/edge-merge.test.ts.
/**
 * @module glob — a path-glob matcher whose cost is linear in the path's length, for patterns
 * that agents write (untrusted). A regex-compiling matcher backtracks: `**\/*a*a*a*a*a*a*b` over a
 * long path took seconds. Here a pattern is a list of segment patterns, matched by simulating the
 * automaton (a set of positions) over the path's segments and each segment's characters, so one
 * match costs at most O(path length × pattern length) steps, whatever the pattern.
 *
 * Syntax: `*` (any run within a segment), `?` (one character), `[abc]` `[a-z]` `[!a]` `[^a]`
 * (a class), `**` as a whole segment (any number of segments), `{a,b}` (alternatives, expanded
 * up front and capped), `\x` (a literal x). Matching is case-insensitive; a pattern that matches
 * a directory matches everything beneath it.
 */

/** Alternatives one pattern may expand to through braces (`{a,b}{c,d}` is 4). */
export const MAX_BRACE_EXPANSIONS = 8;

type CharToken =
  | { kind: "literal"; char: string }
  | { kind: "any" }
  | { kind: "star" }
  | { kind: "class"; negated: boolean; ranges: [string, string][] };

/** A segment pattern keeps its dedupe stamps, so matching allocates nothing per call. */
interface TokenList {
  tokens: CharToken[];
  stamp: Uint32Array;
  generation: number;
}

type SegmentPattern = { kind: "globstar" } | { kind: "segment"; list: TokenList };

/** Counts the automaton's steps; lets tests prove the bound structurally instead of by timing. */
export interface MatchCounter {
  steps: number;
}

export interface CompiledGlob {
  /** Whether the path, or one of its ancestor directories, matches. */
  matches(path: string, counter?: MatchCounter): boolean;
}

/** Why a glob cannot be used (too many brace alternatives), or null. */
export function globProblem(pattern: string): string | null {
  const compiled = compileGlob(pattern);
  return "problem" in compiled ? compiled.problem : null;
}

/** Compiles a glob, or says why it cannot be used (too many brace alternatives). */
export function compileGlob(pattern: string): { glob: CompiledGlob } | { problem: string } {
  const alternatives = expandBraces(pattern);
  if (alternatives === null) return { problem: `braces expand to more than ${MAX_BRACE_EXPANSIONS} patterns` };
  const compiled = alternatives.map((alternative) => parsePattern(alternative.toLowerCase()));
  return {
    glob: {
      matches: (path, counter) => {
        const segments = path.toLowerCase().split("/");
        return compiled.some((segmentPatterns) => matchSegments(segmentPatterns, segments, counter));
      },
    },
  };
}

// ── Matching ──────────────────────────────────────────────────────────────────

/**
 * Runs the pattern's segments as an automaton over the path's segments: `active` holds every
 * pattern position reachable so far. Reaching the end of the pattern after a whole number of
 * segments matches (the rest of the path lies beneath a matched directory).
 */
function matchSegments(patterns: readonly SegmentPattern[], segments: readonly string[], counter?: MatchCounter): boolean {
  const end = patterns.length;
  const stamp = new Uint32Array(end + 1);
  let generation = 1;
  const add = (list: number[], position: number) => {
    if (stamp[position] === generation) return;
    stamp[position] = generation;
    list.push(position);
    // A globstar may match no segment at all: reaching it reaches what follows.
    if (patterns[position]?.kind === "globstar") add(list, position + 1);
  };
  let active: number[] = [];
  add(active, 0);
  if (end > 0 && stamp[end] === generation) return true;
  for (const segment of segments) {
    generation++;
    const next: number[] = [];
    for (const position of active) {
      const pattern = patterns[position];
      if (!pattern) continue;
      if (counter) counter.steps++;
      if (pattern.kind === "globstar") add(next, position);
      else if (matchSegment(pattern.list, segment, counter)) add(next, position + 1);
    }
    if (stamp[end] === generation) return true;
    if (next.length === 0) return false;
    active = next;
  }
  return false;
}

/**
 * The same simulation within one segment, over characters. Only active positions are visited, so
 * the work is exactly the counted steps: per character at most the segment pattern's token count.
 */
function matchSegment(list: TokenList, segment: string, counter?: MatchCounter): boolean {
  const { tokens, stamp } = list;
  const end = tokens.length;
  // Generation stamps dedupe positions without clearing an array per character.
  let generation = ++list.generation;
  let active: number[] = [];
  const add = (positions: number[], position: number) => {
    if (stamp[position] === generation) return;
    stamp[position] = generation;
    positions.push(position);
    // A star may match nothing: reaching it reaches what follows (stars never follow stars).
    if (tokens[position]?.kind === "star") add(positions, position + 1);
  };
  add(active, 0);
  for (const char of segment) {
    generation = ++list.generation;
    const next: number[] = [];
    for (const position of active) {
      const token = tokens[position];
      if (!token) continue;
      // A class costs one step per range it tests.
      if (counter) counter.steps += token.kind === "class" ? token.ranges.length : 1;
      if (token.kind === "star") add(next, position);
      else if (tokenMatches(token, char)) add(next, position + 1);
    }
    if (next.length === 0) return false;
    active = next;
  }
  return active.includes(end);
}

function tokenMatches(token: Exclude<CharToken, { kind: "star" }>, char: string): boolean {
  switch (token.kind) {
    case "literal":
      return token.char === char;
    case "any":
      return true;
    case "class":
      return token.ranges.some(([low, high]) => low <= char && char <= high) !== token.negated;
  }
}

// ── Parsing ───────────────────────────────────────────────────────────────────

function parsePattern(pattern: string): SegmentPattern[] {
  const out: SegmentPattern[] = [];
  for (const segment of splitSegments(pattern)) {
    if (segment === "**") {
      // Consecutive globstars mean the same as one.
      if (out[out.length - 1]?.kind !== "globstar") out.push({ kind: "globstar" });
    } else {
      const tokens = parseSegment(segment);
      out.push({ kind: "segment", list: { tokens, stamp: new Uint32Array(tokens.length + 1), generation: 0 } });
    }
  }
  return out;
}

/** Splits on "/" outside classes ("[/]" is not a separator but cannot match one either). */
function splitSegments(pattern: string): string[] {
  const segments: string[] = [];
  let current = "";
  for (let index = 0; index < pattern.length; index++) {
    const char = pattern[index] as string;
    if (char === "\\" && index + 1 < pattern.length) {
      current += char + pattern[++index];
    } else if (char === "/") {
      segments.push(current);
      current = "";
    } else current += char;
  }
  segments.push(current);
  return segments;
}

function parseSegment(segment: string): CharToken[] {
  const chars = [...segment];
  const tokens: CharToken[] = [];
  for (let index = 0; index < chars.length; index++) {
    const char = chars[index] as string;
    if (char === "\\" && index + 1 < chars.length) {
      tokens.push({ kind: "literal", char: chars[++index] as string });
    } else if (char === "*") {
      // Runs of stars inside a segment mean one star.
      if (tokens[tokens.length - 1]?.kind !== "star") tokens.push({ kind: "star" });
    } else if (char === "?") {
      tokens.push({ kind: "any" });
    } else if (char === "[") {
      const parsed = parseClass(chars, index);
      if (parsed) {
        tokens.push(parsed.token);
        index = parsed.end;
      } else tokens.push({ kind: "literal", char });
    } else tokens.push({ kind: "literal", char });
  }
  return tokens;
}

/** `[...]` from `start`; null when unterminated (then "[" is a literal, as in shells). */
function parseClass(chars: readonly string[], start: number): { token: CharToken; end: number } | null {
  let index = start + 1;
  const negated = chars[index] === "!" || chars[index] === "^";
  if (negated) index++;
  const ranges: [string, string][] = [];
  let first = true;
  for (; index < chars.length; index++) {
    let char = chars[index] as string;
    if (char === "]" && !first) return { token: { kind: "class", negated, ranges }, end: index };
    first = false;
    if (char === "\\" && index + 1 < chars.length) char = chars[++index] as string;
    if (chars[index + 1] === "-" && chars[index + 2] !== undefined && chars[index + 2] !== "]") {
      ranges.push([char, chars[index + 2] as string]);
      index += 2;
    } else ranges.push([char, char]);
  }
  return null;
}

/**
 * Expands `{a,b}` alternatives (nested too); null past MAX_BRACE_EXPANSIONS. A brace without a
 * comma or without its closing brace stays literal.
 */
export function expandBraces(pattern: string): string[] | null {
  const open = findBraceGroup(pattern);
  if (!open) return [pattern];
  const { start, end, options } = open;
  const prefix = pattern.slice(0, start);
  const suffix = pattern.slice(end + 1);
  const out: string[] = [];
  for (const option of options) {
    const expanded = expandBraces(prefix + option + suffix);
    if (expanded === null) return null;
    out.push(...expanded);
    if (out.length > MAX_BRACE_EXPANSIONS) return null;
  }
  return out;
}

/** The first top-level `{…,…}` group: its bounds and its comma-separated options. */
function findBraceGroup(pattern: string): { start: number; end: number; options: string[] } | null {
  for (let start = 0; start < pattern.length; start++) {
    if (pattern[start] === "\\") {
      start++;
      continue;
    }
    if (pattern[start] !== "{") continue;
    let depth = 0;
    const commas: number[] = [];
    for (let index = start; index < pattern.length; index++) {
      const char = pattern[index];
      if (char === "\\") index++;
      else if (char === "{") depth++;
      else if (char === "," && depth === 1) commas.push(index);
      else if (char === "}" && --depth === 0) {
        if (commas.length === 0) break;
        const bounds = [start, ...commas, index];
        const options = bounds.slice(1).map((bound, i) => pattern.slice((bounds[i] as number) + 1, bound));
        return { start, end: index, options };
      }
    }
  }
  return null;
}
