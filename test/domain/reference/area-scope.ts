// The implementation this replaced, kept verbatim as the oracle of test/domain/edge-merge.test.ts.
/**
 * @module scope — the advisory scope check: which changed paths fall outside the areas a task
 * declared. Areas are untrusted (an agent writes them), so globs go through a matcher that is
 * linear in the path's length, and one check spends at most LIMITS.SCOPE_MATCH_STEPS steps.
 */

import { sortPaths } from "@waymark/protocol/paths";
import { LIMITS } from "../../../src/limits";
import { type CompiledGlob, compileGlob, type MatchCounter } from "./glob";

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
  const unexpected = new Set<string>();
  const counter: MatchCounter = { steps: 0 };
  let unchecked = 0;
  for (const path of paths) {
    if (counter.steps > budget) unchecked++;
    else if (!inScope(scope, path, counter)) unexpected.add(path);
  }
  const unexpectedFiles = sortPaths([...unexpected]);
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

function inScope(scope: CompiledScope, path: string, counter?: MatchCounter): boolean {
  const lowerPath = path.toLowerCase();
  if (matches(scope.excluded, lowerPath, counter)) return false;
  return scope.includesEverything || matches(scope.included, lowerPath, counter);
}

function matches(matcher: AreaMatcher, lowerPath: string, counter?: MatchCounter): boolean {
  return matchesWord(matcher.words, lowerPath) || matcher.globs.some((glob) => glob.matches(lowerPath, counter));
}

function matchesWord(words: ReadonlySet<string>, lowerPath: string): boolean {
  if (words.size === 0) return false;
  const segments = lowerPath.split("/");
  if (segments.some((segment) => words.has(segment))) return true;
  const fileName = segments[segments.length - 1] ?? "";
  return hasStem(words, fileName) || hasStem(words, fileName.replace(/^\.+/, ""));
}

/** Every dot-prefix of a file name is a stem, so "auth" and "auth.test" both match auth.test.ts. */
function hasStem(words: ReadonlySet<string>, fileName: string): boolean {
  for (let dot = fileName.indexOf(".", 1); dot > 0; dot = fileName.indexOf(".", dot + 1)) {
    if (words.has(fileName.slice(0, dot))) return true;
  }
  return false;
}
