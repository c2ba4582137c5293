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
  /** Position buffers reused by every match. */
  active: Uint32Array;
  next: Uint32Array;
  /** The same automaton as bit sets, when its positions fit in one 32-bit word (nearly always). */
  bits: SegmentBits | null;
}

/**
 * Position p is bit p. A character moves every active star to itself and every active position
 * whose token accepts the character to the next; a star reached also reaches what follows it.
 */
interface SegmentBits {
  end: number;
  stars: number;
  /** Positions costing one step each (all but classes and the end). */
  unitCost: number;
  /** Classes cost a step per range: [bit, ranges]. */
  classCosts: [number, number][];
  /** For ASCII characters, the positions whose token accepts it. */
  asciiAccepts: Int32Array;
  /** The steps one character costs from each set of active positions, when there are few positions. */
  stepCosts: Uint32Array | null;
}

const MAX_BIT_POSITIONS = 31;
/** Up to this many positions (tokens and the end), the steps per set of positions are tabled (1,024 entries). */
const MAX_TABLED_POSITIONS = 10;

type SegmentPattern = { kind: "globstar" } | { kind: "segment"; list: TokenList };

/** A path pattern with its own dedupe stamps, like TokenList. */
interface PathPattern {
  segments: SegmentPattern[];
  stamp: Uint32Array;
  generation: number;
  /** The positions one step reaches, before they become an array (if they differ from the last). */
  reached: Uint32Array;
}

/** Counts the automaton's steps; lets tests prove the bound structurally instead of by timing. */
export interface MatchCounter {
  steps: number;
}

export interface CompiledGlob {
  /** Whether the path, or one of its ancestor directories, matches. */
  matches(path: string, counter?: MatchCounter): boolean;
  /** Where the automaton stands at the repository root, before any segment. */
  enterRoot(): DirectoryProgress;
  /**
   * Where it stands after one more directory, the lowercased segment `lowerPath[start, end)`:
   * computed once per directory and shared by its files and subdirectories, so each segment is
   * matched once. Segments are read in place, never sliced.
   */
  enterDirectory(parent: DirectoryProgress, lowerPath: string, start: number, end: number): DirectoryProgress;
  /**
   * Whether the file named by the rest of `lowerPath` from `nameStart` (lowercased), in the
   * entered directory, matches: the same verdict as `matches` on its whole path, and the same
   * steps counted, the directory's included.
   */
  matchesName(directory: DirectoryProgress, lowerPath: string, nameStart: number, counter?: MatchCounter): boolean;
  /** Whether nothing beneath the directory can change its verdict (then every file has it). */
  decided(directory: DirectoryProgress): boolean;
}

/** Where each brace alternative stands after a directory's segments. */
export type DirectoryProgress = readonly AlternativeProgress[];

interface AlternativeProgress {
  /** Decided within the directory: it matched, or no position is left to go on from. */
  verdict: boolean | undefined;
  /** The pattern positions reached (when undecided). */
  active: readonly number[];
  /** The steps the directory took, charged again to every file in it. */
  steps: number;
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
  const enterRoot = (): DirectoryProgress => compiled.map(rootProgress);
  const enterDirectory = (parent: DirectoryProgress, lowerPath: string, start: number, end: number): DirectoryProgress => {
    // Nothing beneath a decided directory changes its verdict (or its steps): it is shared.
    if (isDecided(parent)) return parent;
    const progress = new Array<AlternativeProgress>(compiled.length);
    for (let index = 0; index < compiled.length; index++) {
      progress[index] = descend(compiled[index] as PathPattern, parent[index] as AlternativeProgress, lowerPath, start, end);
    }
    return progress;
  };
  const matchesName = (directory: DirectoryProgress, lowerPath: string, nameStart: number, counter?: MatchCounter): boolean => {
    for (let index = 0; index < compiled.length; index++) {
      if (matchName(compiled[index] as PathPattern, directory[index] as AlternativeProgress, lowerPath, nameStart, counter)) return true;
    }
    return false;
  };
  return {
    glob: {
      matches: (path, counter) => {
        const lowerPath = path.toLowerCase();
        let directory = enterRoot();
        let start = 0;
        for (let end = lowerPath.indexOf("/"); end >= 0; end = lowerPath.indexOf("/", start)) {
          directory = enterDirectory(directory, lowerPath, start, end);
          start = end + 1;
        }
        return matchesName(directory, lowerPath, start, counter);
      },
      enterRoot,
      enterDirectory,
      matchesName,
      decided: isDecided,
    },
  };
}

// ── Matching ──────────────────────────────────────────────────────────────────

/**
 * The pattern's segments run as an automaton over the path's segments: `active` holds every
 * pattern position reachable so far. Reaching the end of the pattern after a whole number of
 * segments matches (the rest of the path lies beneath a matched directory).
 */
function rootProgress(pattern: PathPattern): AlternativeProgress {
  const end = pattern.segments.length;
  const active = reachable(pattern, [0]);
  if (end > 0 && active.includes(end)) return { verdict: true, active: [], steps: 0 };
  return { verdict: undefined, active, steps: 0 };
}

function isDecided(progress: DirectoryProgress): boolean {
  for (let index = 0; index < progress.length; index++) if ((progress[index] as AlternativeProgress).verdict === undefined) return false;
  return true;
}

/** One directory segment further; a decided alternative stays decided, at no cost. */
function descend(pattern: PathPattern, parent: AlternativeProgress, text: string, start: number, end: number): AlternativeProgress {
  if (parent.verdict !== undefined) return parent;
  directoryCounter.steps = parent.steps;
  const active = step(pattern, parent.active, text, start, end, directoryCounter);
  const steps = directoryCounter.steps;
  if (active.includes(pattern.segments.length)) return { verdict: true, active: [], steps };
  return { verdict: active.length === 0 ? false : undefined, active, steps };
}

/** Counts one directory's steps (descend is never re-entered, so one counter serves every call). */
const directoryCounter: MatchCounter = { steps: 0 };

/** The last segment, a file's name (the rest of `text` from `start`), from where its directory left the automaton. */
function matchName(patterns: PathPattern, directory: AlternativeProgress, text: string, start: number, counter?: MatchCounter): boolean {
  if (counter) counter.steps += directory.steps;
  if (directory.verdict !== undefined) return directory.verdict;
  // `step` without building the positions: only whether the end is among them. Every active
  // position is still visited, so the steps counted are the same.
  const { segments } = patterns;
  const end = segments.length;
  let matched = false;
  const { active } = directory;
  for (let index = 0; index < active.length; index++) {
    const position = active[index] as number;
    const pattern = segments[position];
    if (!pattern) continue;
    if (counter) counter.steps++;
    const reached =
      pattern.kind === "globstar" ? position : matchSegment(pattern.list, text, start, text.length, counter) ? position + 1 : -1;
    if (reached === end || (reached >= 0 && segments[reached]?.kind === "globstar" && reached + 1 === end)) matched = true;
  }
  return matched;
}

/**
 * The positions reached from `active` by one segment (`text[start, end)`), and the globstars'
 * free moves (as `reachable`); `active` itself when they are the same positions (a `**` going
 * down directories that do not advance it), so that walking a tree allocates only where the
 * automaton moves.
 */
function step(
  patterns: PathPattern,
  active: readonly number[],
  text: string,
  start: number,
  end: number,
  counter?: MatchCounter,
): readonly number[] {
  const { segments, stamp, reached } = patterns;
  const generation = ++patterns.generation;
  let count = 0;
  for (let index = 0; index < active.length; index++) {
    const position = active[index] as number;
    const pattern = segments[position];
    if (!pattern) continue;
    if (counter) counter.steps++;
    let next: number;
    if (pattern.kind === "globstar") next = position;
    else if (matchSegment(pattern.list, text, start, end, counter)) next = position + 1;
    else continue;
    while (stamp[next] !== generation) {
      stamp[next] = generation;
      reached[count++] = next;
      if (segments[next]?.kind !== "globstar") break;
      next++;
    }
  }
  let same = count === active.length;
  for (let index = 0; same && index < count; index++) same = reached[index] === active[index];
  return same ? active : Array.from(reached.subarray(0, count));
}

/** The positions plus those a globstar reaches by matching no segment at all; no duplicates. */
function reachable(patterns: PathPattern, positions: readonly number[]): number[] {
  const stamp = patterns.stamp;
  const generation = ++patterns.generation;
  const out: number[] = [];
  for (let position of positions) {
    while (stamp[position] !== generation) {
      stamp[position] = generation;
      out.push(position);
      if (patterns.segments[position]?.kind !== "globstar") break;
      position++;
    }
  }
  return out;
}

/**
 * The same simulation within one segment, `text[start, end)`, over characters. Only active
 * positions are visited, so the work is exactly the counted steps: per character at most the
 * segment pattern's token count.
 */
function matchSegment(list: TokenList, text: string, start: number, end: number, counter?: MatchCounter): boolean {
  if (list.bits !== null) return matchSegmentBits(list, list.bits, text, start, end, counter);
  const { tokens } = list;
  const accepting = tokens.length;
  // Two position buffers swapped per character; generation stamps dedupe positions without
  // clearing anything, so matching allocates nothing.
  let active = list.active;
  let next = list.next;
  let activeCount = reach(list, active, 0, 0, ++list.generation);
  for (let at = start; at < end; ) {
    // One character is one code point (a lone surrogate stands alone), as when iterating a string.
    const codePoint = text.codePointAt(at) as number;
    const width = codePoint > 0xffff ? 2 : 1;
    const char = text.slice(at, at + width);
    at += width;
    const generation = ++list.generation;
    let nextCount = 0;
    for (let index = 0; index < activeCount; index++) {
      const position = active[index] as number;
      const token = tokens[position];
      if (!token) continue;
      // A class costs one step per range it tests.
      if (counter) counter.steps += token.kind === "class" ? token.ranges.length : 1;
      if (token.kind === "star") nextCount = reach(list, next, nextCount, position, generation);
      else if (tokenMatches(token, char)) nextCount = reach(list, next, nextCount, position + 1, generation);
    }
    if (nextCount === 0) return false;
    [active, next] = [next, active];
    activeCount = nextCount;
  }
  for (let index = 0; index < activeCount; index++) if (active[index] === accepting) return true;
  return false;
}

/** matchSegment on bit sets: the same positions visited and the same steps counted. */
function matchSegmentBits(list: TokenList, bits: SegmentBits, text: string, start: number, end: number, counter?: MatchCounter): boolean {
  const { stars, unitCost, classCosts, asciiAccepts, stepCosts } = bits;
  let active = withStarsSkipped(1, stars);
  for (let index = start; index < end; index++) {
    const code = text.charCodeAt(index);
    let accepts: number;
    if (code < 128) accepts = asciiAccepts[code] as number;
    else {
      const codePoint = text.codePointAt(index) as number;
      if (codePoint > 0xffff) index++;
      accepts = acceptingPositions(list.tokens, String.fromCodePoint(codePoint));
    }
    if (counter) counter.steps += stepCosts !== null ? (stepCosts[active] as number) : stepCost(active, unitCost, classCosts);
    active = withStarsSkipped((active & stars) | ((active & accepts) << 1), stars);
    if (active === 0) return false;
  }
  return (active & (1 << bits.end)) !== 0;
}

/** The steps one character costs: one per active position, one per range of an active class. */
function stepCost(active: number, unitCost: number, classCosts: readonly [number, number][]): number {
  let steps = popCount(active & unitCost);
  for (let cost = 0; cost < classCosts.length; cost++) {
    const [bit, ranges] = classCosts[cost] as [number, number];
    if (active & bit) steps += ranges;
  }
  return steps;
}

/** A star may match nothing: reaching it reaches what follows (stars never follow stars). */
function withStarsSkipped(positions: number, stars: number): number {
  return positions | ((positions & stars) << 1);
}

function popCount(word: number): number {
  let count = word - ((word >>> 1) & 0x55555555);
  count = (count & 0x33333333) + ((count >>> 2) & 0x33333333);
  return (((count + (count >>> 4)) & 0x0f0f0f0f) * 0x01010101) >>> 24;
}

/** Positions whose token (not a star) accepts the character, as bits. */
function acceptingPositions(tokens: readonly CharToken[], char: string): number {
  let accepts = 0;
  tokens.forEach((token, position) => {
    if (token.kind !== "star" && tokenMatches(token, char)) accepts |= 1 << position;
  });
  return accepts;
}

function segmentBits(tokens: readonly CharToken[]): SegmentBits | null {
  if (tokens.length + 1 > MAX_BIT_POSITIONS) return null;
  let stars = 0;
  let unitCost = 0;
  const classCosts: [number, number][] = [];
  tokens.forEach((token, position) => {
    if (token.kind === "star") stars |= 1 << position;
    if (token.kind === "class") classCosts.push([1 << position, token.ranges.length]);
    else unitCost |= 1 << position;
  });
  const asciiAccepts = new Int32Array(128);
  for (let code = 0; code < 128; code++) asciiAccepts[code] = acceptingPositions(tokens, String.fromCharCode(code));
  let stepCosts: Uint32Array | null = null;
  if (tokens.length + 1 <= MAX_TABLED_POSITIONS) {
    stepCosts = new Uint32Array(1 << (tokens.length + 1));
    for (let active = 0; active < stepCosts.length; active++) stepCosts[active] = stepCost(active, unitCost, classCosts);
  }
  return { end: tokens.length, stars, unitCost, classCosts, asciiAccepts, stepCosts };
}

/** Adds a position, and the one after it when it is a star (which may match nothing); the new count. */
function reach(list: TokenList, positions: Uint32Array, count: number, position: number, generation: number): number {
  const { tokens, stamp } = list;
  let added = count;
  for (let at = position; stamp[at] !== generation; at++) {
    stamp[at] = generation;
    positions[added++] = at;
    // Stars never follow stars, so this reaches at most one position more.
    if (tokens[at]?.kind !== "star") break;
  }
  return added;
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

function parsePattern(pattern: string): PathPattern {
  const out: SegmentPattern[] = [];
  for (const segment of splitSegments(pattern)) {
    if (segment === "**") {
      // Consecutive globstars mean the same as one.
      if (out[out.length - 1]?.kind !== "globstar") out.push({ kind: "globstar" });
    } else {
      const tokens = parseSegment(segment);
      const size = tokens.length + 1;
      out.push({
        kind: "segment",
        list: {
          tokens,
          stamp: new Uint32Array(size),
          generation: 0,
          active: new Uint32Array(size),
          next: new Uint32Array(size),
          bits: segmentBits(tokens),
        },
      });
    }
  }
  return { segments: out, stamp: new Uint32Array(out.length + 2), generation: 0, reached: new Uint32Array(out.length + 2) };
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
