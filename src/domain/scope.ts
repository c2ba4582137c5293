/**
 * @module scope — the advisory scope check: which changed paths fall outside the areas a task
 * declared. Areas are untrusted (an agent writes them), so globs go through a matcher that is
 * linear in the path's length, and one check spends at most LIMITS.SCOPE_MATCH_STEPS steps.
 */
import { type CompiledGlob, compileGlob, type DirectoryProgress, type MatchCounter } from "@waymark/protocol/glob";
import { LIMITS } from "../limits";
import { sortPaths } from "./paths";

export interface ScopeVerification {
  scope_match: boolean;
  unexpected_files: string[];
  warnings: string[];
}

const GLOB_CHARACTERS = /[*?[\]{}!]/;

/** The areas of one task, compiled once so that checking n paths costs O(n), not O(n × areas). */
interface AreaMatcher {
  /** Lowercased bare words: a word matches a whole path segment or a file's stem. */
  words: Set<string>;
  globs: CompiledGlob[];
}

interface CompiledScope {
  included: AreaMatcher;
  excluded: AreaMatcher;
  /** Only exclusions declared: everything else is in scope. */
  includesEverything: boolean;
  /**
   * The directory of the last path checked and its ancestors, from the root down: keys are
   * lowercased directory paths with a trailing "/" ("" for the root). Sorted paths walk the tree
   * in order, so each directory is entered once and its files only match their names.
   */
  walkKeys: string[];
  walk: DirectoryVerdicts[];
}

interface DirectoryVerdicts {
  excluded: DirectoryMatch;
  included: DirectoryMatch;
}

interface DirectoryMatch {
  /** One of the directory's segments is a declared word. */
  wordInDirectory: boolean;
  /** Per glob, its automaton after the directory's segments; run when first needed. */
  globs: (DirectoryProgress | undefined)[];
  /** Where the globs' progress comes from: the parent directory and this directory's name. */
  parent: DirectoryMatch | undefined;
  segment: string;
}

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
  const included: AreaMatcher = { words: new Set(), globs: [] };
  const excluded: AreaMatcher = { words: new Set(), globs: [] };
  for (const area of areas) {
    const excludes = area.startsWith("!");
    addArea(excludes ? excluded : included, excludes ? area.slice(1).trim() : area);
  }
  return {
    included,
    excluded,
    includesEverything: included.words.size === 0 && included.globs.length === 0,
    walkKeys: [""],
    walk: [{ excluded: rootMatch(excluded), included: rootMatch(included) }],
  };
}

function addArea(matcher: AreaMatcher, area: string): void {
  if (!area.includes("/") && !GLOB_CHARACTERS.test(area)) {
    matcher.words.add(area.toLowerCase());
    return;
  }
  const glob = area.replace(/^(?:\.?\/)+/, "").replace(/\/+$/, "");
  // A glob without "/" may match at any depth, as in .gitignore; whatever a glob matches takes
  // everything beneath it along (the matcher's rule), since a matched directory means its contents.
  const anchored = glob === "" ? "**" : area.includes("/") ? glob : `**/${glob}`;
  const compiled = compileGlob(anchored);
  // start_task refuses such areas; one stored before that rule matches nothing.
  if ("glob" in compiled) matcher.globs.push(compiled.glob);
}

/**
 * The verdict on a path is the verdict on its directory (computed once per directory, from its
 * parent's) followed by its file name; the glob steps counted are those of matching the whole path.
 */
function inScope(scope: CompiledScope, path: string, counter?: MatchCounter): boolean {
  const lowerPath = path.toLowerCase();
  const nameStart = lowerPath.lastIndexOf("/") + 1;
  const directory = directoryVerdicts(scope, lowerPath, nameStart);
  const name = lowerPath.slice(nameStart);
  if (matches(scope.excluded, directory.excluded, name, counter)) return false;
  return scope.includesEverything || matches(scope.included, directory.included, name, counter);
}

/** The directory of a lowercased path whose file name starts at `nameStart`. */
function directoryVerdicts(scope: CompiledScope, lowerPath: string, nameStart: number): DirectoryVerdicts {
  const { walkKeys, walk } = scope;
  let depth = walkKeys.length - 1;
  const last = walkKeys[depth] as string;
  if (last.length === nameStart && lowerPath.startsWith(last)) return walk[depth] as DirectoryVerdicts;
  const key = lowerPath.slice(0, nameStart);
  while (depth > 0 && !key.startsWith(walkKeys[depth] as string)) depth--;
  walkKeys.length = depth + 1;
  walk.length = depth + 1;
  let verdicts = walk[depth] as DirectoryVerdicts;
  for (let start = (walkKeys[depth] as string).length; start < key.length; ) {
    const end = key.indexOf("/", start);
    const segment = key.slice(start, end);
    verdicts = {
      excluded: subdirectoryMatch(scope.excluded, verdicts.excluded, segment),
      included: subdirectoryMatch(scope.included, verdicts.included, segment),
    };
    start = end + 1;
    walkKeys.push(key.slice(0, start));
    walk.push(verdicts);
  }
  return verdicts;
}

function rootMatch(matcher: AreaMatcher): DirectoryMatch {
  return { wordInDirectory: false, globs: matcher.globs.map((glob) => glob.enterRoot()), parent: undefined, segment: "" };
}

function subdirectoryMatch(matcher: AreaMatcher, parent: DirectoryMatch, segment: string): DirectoryMatch {
  return {
    wordInDirectory: parent.wordInDirectory || matcher.words.has(segment),
    globs: matcher.globs.map(() => undefined),
    parent,
    segment,
  };
}

function globProgress(matcher: AreaMatcher, directory: DirectoryMatch, index: number): DirectoryProgress {
  const known = directory.globs[index];
  if (known !== undefined) return known;
  const glob = matcher.globs[index] as CompiledGlob;
  const progress = glob.enterDirectory(globProgress(matcher, directory.parent as DirectoryMatch, index), directory.segment);
  directory.globs[index] = progress;
  return progress;
}

function matches(matcher: AreaMatcher, directory: DirectoryMatch, name: string, counter?: MatchCounter): boolean {
  if (matchesWord(matcher.words, directory, name)) return true;
  for (let index = 0; index < matcher.globs.length; index++) {
    if ((matcher.globs[index] as CompiledGlob).matchesName(globProgress(matcher, directory, index), name, counter)) return true;
  }
  return false;
}

function matchesWord(words: ReadonlySet<string>, directory: DirectoryMatch, fileName: string): boolean {
  if (words.size === 0) return false;
  if (directory.wordInDirectory || words.has(fileName)) return true;
  return hasStem(words, fileName) || (fileName.startsWith(".") && hasStem(words, fileName.replace(/^\.+/, "")));
}

/** Every dot-prefix of a file name is a stem, so "auth" and "auth.test" both match auth.test.ts. */
function hasStem(words: ReadonlySet<string>, fileName: string): boolean {
  for (let dot = fileName.indexOf(".", 1); dot > 0; dot = fileName.indexOf(".", dot + 1)) {
    if (words.has(fileName.slice(0, dot))) return true;
  }
  return false;
}
