/**
 * @module domain/area-scope — the advisory scope check: which changed paths fall outside the areas a task
 * declared. Areas are untrusted (an agent writes them), so globs go through a matcher that is
 * linear in the path's length, and one check spends at most LIMITS.SCOPE_MATCH_STEPS steps.
 */
import { type CompiledGlob, compileGlob, type DirectoryProgress, type MatchCounter } from "@waymark/protocol/glob";
import { sortPaths } from "@waymark/protocol/paths";
import type { Verification } from "@waymark/protocol/views/task";
import { LIMITS } from "../limits";

/** The scope check's part of a task's verification (@waymark/protocol/views/task). */
export type ScopeVerification = Pick<Verification, "scope_match" | "unexpected_files" | "warnings">;

const GLOB_CHARACTERS = /[*?[\]{}!]/;

/** The areas of one task, compiled once so that checking n paths costs O(n), not O(n × areas). */
interface AreaMatcher {
  /** Lowercased bare words: a word matches a whole path segment or a file's stem. */
  words: Words;
  globs: CompiledGlob[];
  /** No words and no globs: it matches nothing, so directories carry no verdicts for it. */
  empty: boolean;
}

/**
 * The declared words, and which characters they start with: a name whose first character starts
 * no word cannot be a word nor have one as its stem, and most names are rejected on that alone.
 */
interface Words {
  set: Set<string>;
  /** Per ASCII code, whether a word starts with it. */
  asciiStarts: Uint8Array;
  /** Some word starts with a character beyond ASCII (or is empty): such names are looked up. */
  otherStarts: boolean;
}

interface CompiledScope {
  included: AreaMatcher;
  excluded: AreaMatcher;
  /** Only exclusions declared: everything else is in scope. */
  includesEverything: boolean;
  /**
   * The directories from the root down to the one of the last path checked: `levels[0]` is the
   * root and `levels[depth]` that directory, which is `walked` (a lowercased path in it) up to
   * its `end`. Sorted paths walk the tree in order, so each directory is entered once and its
   * files only match their names. Levels past `depth` are kept to be reused: walking a tree
   * allocates nothing per directory.
   */
  walked: string;
  depth: number;
  levels: DirectoryLevel[];
}

interface DirectoryLevel {
  /** Where the directory ends in `walked`, after its "/" (0 for the root). */
  end: number;
  excluded: LevelMatch;
  included: LevelMatch;
}

/** One matcher's verdicts on a directory. */
interface LevelMatch {
  /** One of the directory's segments is a declared word. */
  wordInDirectory: boolean;
  /** Per glob, its automaton after the directory's segments. */
  globs: DirectoryProgress[];
}

const DOT = 0x2e;
/** Characters toLowerCase may change: upper-case ASCII, and anything beyond ASCII. */
const MAY_CHANGE_CASE = /[A-Z\u0080-\uffff]/;

/**
 * DESIGN.md scope rules. A bare word matches a whole path segment or a file's stem ("auth"
 * matches src/auth/x.ts, auth.ts, auth.test.ts, AUTH.md; not authors.md). An area with "/" or
 * a glob character is a path glob anchored at the repository root ("src/api/**", "src/api/",
 * "src/api" all mean everything under src/api); a glob without "/" ("*.md") matches a segment at
 * any depth. A leading "!" excludes what follows. Case-insensitive. Advisory: it only reports.
 * No areas declared (undefined, [] or only blank ones) means no scope: everything matches.
 */
export function checkScope(
  areas: readonly string[] | undefined,
  paths: readonly string[],
  budget: number = LIMITS.SCOPE_MATCH_STEPS,
): ScopeVerification {
  const declared = declaredAreas(areas);
  if (declared.length === 0) return { scope_match: true, unexpected_files: [], warnings: [] };
  const scope = compileScope(declared);
  let unexpectedFiles: string[] = [];
  // Paths usually come sorted and distinct (net changes are): then the unexpected ones are too.
  let inOrder = true;
  const counter: MatchCounter = { steps: 0 };
  let unchecked = 0;
  for (let index = 0; index < paths.length; index++) {
    const path = paths[index] as string;
    if (counter.steps > budget) unchecked++;
    else if (!inScope(scope, path, counter)) {
      const previous = unexpectedFiles[unexpectedFiles.length - 1];
      if (previous !== undefined && !(previous < path)) inOrder = false;
      unexpectedFiles.push(path);
    }
  }
  if (!inOrder) unexpectedFiles = sortPaths([...new Set(unexpectedFiles)]);
  const warnings =
    unexpectedFiles.length === 0 ? [] : [`${unexpectedFiles.length} file(s) changed outside declared scope (${declared.join(", ")})`];
  if (unchecked > 0) warnings.push(`scope not checked for ${unchecked} file(s): the declared areas are too costly to match`);
  return { scope_match: unexpectedFiles.length === 0 && unchecked === 0, unexpected_files: unexpectedFiles, warnings };
}

/** Whether one area alone lets the path in ("!x" lets in everything but x; a blank area nothing). */
export function matchesArea(area: string, path: string, counter?: MatchCounter): boolean {
  const declared = declaredAreas([area]);
  return declared.length > 0 && inScope(compileScope(declared), path, counter);
}

function declaredAreas(areas: readonly string[] | undefined): string[] {
  return (areas ?? []).map((area) => area.trim()).filter((area) => area !== "" && area !== "!");
}

function compileScope(areas: readonly string[]): CompiledScope {
  const included = areaMatcher();
  const excluded = areaMatcher();
  for (const area of areas) {
    const excludes = area.startsWith("!");
    addArea(excludes ? excluded : included, excludes ? area.slice(1).trim() : area);
  }
  const root: DirectoryLevel = {
    end: 0,
    excluded: { wordInDirectory: false, globs: excluded.globs.map((glob) => glob.enterRoot()) },
    included: { wordInDirectory: false, globs: included.globs.map((glob) => glob.enterRoot()) },
  };
  return { included, excluded, includesEverything: included.empty, walked: "", depth: 0, levels: [root] };
}

function areaMatcher(): AreaMatcher {
  return { words: { set: new Set(), asciiStarts: new Uint8Array(128), otherStarts: false }, globs: [], empty: true };
}

function addArea(matcher: AreaMatcher, area: string): void {
  if (!area.includes("/") && !GLOB_CHARACTERS.test(area)) {
    const word = area.toLowerCase();
    const first = word.charCodeAt(0);
    matcher.words.set.add(word);
    if (first < 128) (matcher.words.asciiStarts[first] as number) = 1;
    else matcher.words.otherStarts = true;
    matcher.empty = false;
    return;
  }
  const glob = area.replace(/^(?:\.?\/)+/, "").replace(/\/+$/, "");
  // A glob without "/" may match at any depth, as in .gitignore; whatever a glob matches takes
  // everything beneath it along (the matcher's rule), since a matched directory means its contents.
  const anchored = glob === "" ? "**" : area.includes("/") ? glob : `**/${glob}`;
  const compiled = compileGlob(anchored);
  // start_task refuses such areas; one stored before that rule matches nothing.
  if ("glob" in compiled) {
    matcher.globs.push(compiled.glob);
    matcher.empty = false;
  }
}

/**
 * The verdict on a path is the verdict on its directory (computed once per directory, from its
 * parent's) followed by its file name; the glob steps counted are those of matching the whole path.
 */
function inScope(scope: CompiledScope, path: string, counter?: MatchCounter): boolean {
  // Most paths are lowercase already; toLowerCase would copy each of them.
  const lowerPath = MAY_CHANGE_CASE.test(path) ? path.toLowerCase() : path;
  const nameStart = lowerPath.lastIndexOf("/") + 1;
  const directory = enterDirectory(scope, lowerPath, nameStart);
  if (matches(scope.excluded, directory.excluded, lowerPath, nameStart, counter)) return false;
  return scope.includesEverything || matches(scope.included, directory.included, lowerPath, nameStart, counter);
}

/** The directory of a lowercased path whose file name starts at `nameStart`. */
function enterDirectory(scope: CompiledScope, lowerPath: string, nameStart: number): DirectoryLevel {
  const { walked, levels } = scope;
  let depth = scope.depth;
  const walkedEnd = (levels[depth] as DirectoryLevel).end;
  // Characters compared one by one: slices and startsWith cost more than the comparison itself.
  if (walkedEnd === nameStart) {
    let at = nameStart - 1;
    while (at >= 0 && lowerPath.charCodeAt(at) === walked.charCodeAt(at)) at--;
    if (at < 0) return levels[depth] as DirectoryLevel;
  }
  // Back up to the deepest directory the path shares with the walked one, then walk down.
  const shared = Math.min(nameStart, walkedEnd);
  let common = 0;
  while (common < shared && lowerPath.charCodeAt(common) === walked.charCodeAt(common)) common++;
  while ((levels[depth] as DirectoryLevel).end > common) depth--;
  for (let start = (levels[depth] as DirectoryLevel).end; start < nameStart; ) {
    const end = lowerPath.indexOf("/", start);
    const parent = levels[depth] as DirectoryLevel;
    depth++;
    let level = levels[depth];
    if (level === undefined) {
      level = { end: 0, excluded: { wordInDirectory: false, globs: [] }, included: { wordInDirectory: false, globs: [] } };
      levels[depth] = level;
    }
    level.end = end + 1;
    enterSubdirectory(scope.excluded, parent.excluded, level.excluded, lowerPath, start, end);
    enterSubdirectory(scope.included, parent.included, level.included, lowerPath, start, end);
    start = end + 1;
  }
  scope.depth = depth;
  scope.walked = lowerPath;
  return levels[depth] as DirectoryLevel;
}

/** A matcher's verdicts on the subdirectory `lowerPath[start, end)` of `parent`, written into `into`. */
function enterSubdirectory(
  matcher: AreaMatcher,
  parent: LevelMatch,
  into: LevelMatch,
  lowerPath: string,
  start: number,
  end: number,
): void {
  if (matcher.empty) return;
  into.wordInDirectory = parent.wordInDirectory || isWord(matcher.words, lowerPath, start, end);
  for (let index = 0; index < matcher.globs.length; index++) {
    into.globs[index] = (matcher.globs[index] as CompiledGlob).enterDirectory(
      parent.globs[index] as DirectoryProgress,
      lowerPath,
      start,
      end,
    );
  }
}

/** Whether the file named by `lowerPath` from `nameStart`, in a directory with these verdicts, matches. */
function matches(matcher: AreaMatcher, directory: LevelMatch, lowerPath: string, nameStart: number, counter?: MatchCounter): boolean {
  if (matcher.empty) return false;
  if (matchesWord(matcher.words, directory.wordInDirectory, lowerPath, nameStart)) return true;
  for (let index = 0; index < matcher.globs.length; index++) {
    const glob = matcher.globs[index] as CompiledGlob;
    if (glob.matchesName(directory.globs[index] as DirectoryProgress, lowerPath, nameStart, counter)) return true;
  }
  return false;
}

function matchesWord(words: Words, wordInDirectory: boolean, lowerPath: string, nameStart: number): boolean {
  if (words.set.size === 0) return false;
  if (wordInDirectory) return true;
  if (mayStartWord(words, lowerPath, nameStart)) {
    const name = lowerPath.slice(nameStart);
    if (words.set.has(name) || hasStem(words.set, name)) return true;
  }
  if (lowerPath.charCodeAt(nameStart) !== DOT) return false;
  const undotted = lowerPath.slice(nameStart).replace(/^\.+/, "");
  return mayStartWord(words, undotted, 0) && hasStem(words.set, undotted);
}

/** Whether the segment `lowerPath[start, end)` is a declared word. */
function isWord(words: Words, lowerPath: string, start: number, end: number): boolean {
  return words.set.size > 0 && mayStartWord(words, lowerPath, start) && words.set.has(lowerPath.slice(start, end));
}

/** False when no word starts with the character at `at` (then no word starts there). */
function mayStartWord(words: Words, text: string, at: number): boolean {
  const first = text.charCodeAt(at);
  return first < 128 ? words.asciiStarts[first] === 1 : words.otherStarts;
}

/** Every dot-prefix of a file name is a stem, so "auth" and "auth.test" both match auth.test.ts. */
function hasStem(words: ReadonlySet<string>, fileName: string): boolean {
  for (let dot = fileName.indexOf(".", 1); dot > 0; dot = fileName.indexOf(".", dot + 1)) {
    if (words.has(fileName.slice(0, dot))) return true;
  }
  return false;
}
