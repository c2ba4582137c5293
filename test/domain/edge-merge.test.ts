/**
 * The edge's attribution and scope check as rewritten for speed (lists merged in path order,
 * scope decided once per directory) against the implementation they replaced, kept verbatim in
 * ./reference: thousands of random cases, sorted as git sends them and shuffled as a hand-made
 * client might, must give the same net changes, the same errors, the same files_changed and the
 * same scope verdicts, down to the glob steps counted against the budget.
 */
import { compileGlob } from "@waymark/protocol/glob";
import { describe, expect, it } from "vitest";
import { checkScope, matchesArea } from "../../src/domain/area-scope";
import { computeNetChanges, summarizeChanges } from "../../src/domain/changes";
import { checkScope as referenceCheckScope, matchesArea as referenceMatchesArea } from "./reference/area-scope";
import { computeNetChanges as referenceNetChanges, summarizeChanges as referenceSummary } from "./reference/attribution";
import { compileGlob as referenceCompileGlob } from "./reference/glob";

/** A small deterministic generator (mulberry32), so a failing case can be replayed by its seed. */
function random(seed: number) {
  let state = seed >>> 0;
  const next = () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const below = (n: number) => Math.floor(next() * n);
  const pick = <T>(items: readonly T[]): T => items[below(items.length)] as T;
  return { next, below, pick };
}
type Random = ReturnType<typeof random>;

// Segments chosen to collide with the areas below, with case, dots, and characters whose
// lowercase or UTF-16 order is unusual (İ, Σ, astral emoji, U+FFFD).
const SEGMENTS = [
  "src",
  "SRC",
  "auth",
  "Auth.ts",
  "api",
  "a",
  "b.md",
  "README.md",
  ".env",
  ".env.local",
  "x.test.ts",
  "İ",
  "ΑΣ",
  "😀.md",
  "\uFFFD",
  "p1",
  "p13",
  "lib-a",
  "a.b.c",
  "z",
];
const AREAS = [
  "auth",
  "api",
  "src/**",
  "src/",
  "*.md",
  "!*.md",
  "!src/a/**",
  "p1*/**",
  "**/a/*",
  "[a-c]*",
  "?.md",
  "{src,lib-a}/**",
  "a.b",
  "!auth",
  ".env",
  "İ",
  "σ*",
  "**",
  "*/*/*",
  "x.test",
];
const BLOBS = ["e69de29bb2d1d6434b8b29ae775ad8c2e48c5391", "1".repeat(40), "2".repeat(40), "3".repeat(40)];
const MODES = ["100644", "100755", "120000", "160000"];

function path(rng: Random): string {
  const depth = 1 + rng.below(4);
  return Array.from({ length: depth }, () => rng.pick(SEGMENTS)).join("/");
}
function fileState(rng: Random) {
  return rng.below(4) === 0 ? null : { mode: rng.pick(MODES), blob: rng.pick(BLOBS) };
}
/** A list of entries on a pool of paths; sometimes a path repeats, agreeing or not. */
function entries<Entry>(rng: Random, pool: readonly string[], make: (path: string) => Entry, conflicts: boolean): Entry[] {
  const out: Entry[] = [];
  for (let count = rng.below(12); count > 0; count--) {
    const entry = make(rng.pick(pool));
    out.push(entry);
    if (rng.below(8) === 0) out.push(conflicts && rng.below(2) === 0 ? make((entry as { path: string }).path) : entry);
  }
  if (rng.below(3) > 0) out.sort((left, right) => compareUnits((left as { path: string }).path, (right as { path: string }).path));
  return out;
}
function compareUnits(left: string, right: string): number {
  if (left < right) return -1;
  return left > right ? 1 : 0;
}
function outcome<T>(run: () => T): { value: T } | { error: string } {
  try {
    return { value: run() };
  } catch (error) {
    return { error: String(error) };
  }
}

describe("edge attribution against the implementation it replaced", () => {
  it.each([1, 2, 3, 4])("git, checksum and resolved changes agree on 1,500 random cases (seed %i)", (seed) => {
    const rng = random(seed);
    for (let round = 0; round < 1500; round++) {
      const pool = Array.from({ length: 1 + rng.below(10) }, () => path(rng));
      const conflicts = rng.below(10) === 0;
      const dirty = (p: string) => ({ path: p, head: fileState(rng), worktree: fileState(rng) });
      const transition = (p: string) => ({ path: p, before: fileState(rng), after: fileState(rng) });
      const head = "a".repeat(40);
      const snapshot = { type: "git" as const, head, dirty: entries(rng, pool, dirty, conflicts) };
      const kind = rng.below(3);
      const changes =
        kind === 0
          ? {
              type: "git" as const,
              start_head: head,
              head: "b".repeat(40),
              committed: entries(rng, pool, transition, conflicts),
              dirty: entries(rng, pool, dirty, conflicts),
            }
          : kind === 1
            ? { type: "checksum" as const, transitions: entries(rng, pool, transition, conflicts) }
            : {
                type: "net" as const,
                transitions: entries(rng, pool, (p) => ({ ...transition(p), committed: rng.below(2) === 0 }), conflicts),
              };
      const start = kind === 1 ? { type: "checksum" as const, files: 0, digest: "" } : snapshot;
      const expected = outcome(() => referenceNetChanges(start, changes));
      const actual = outcome(() => computeNetChanges(start, changes));
      expect(actual, `seed ${seed} round ${round}`).toEqual(expected);
      if ("value" in expected && "value" in actual) {
        expect(summarizeChanges(actual.value)).toEqual(referenceSummary(expected.value));
      }
    }
  });
});

describe("large observations against the implementation it replaced", () => {
  /** Many paths in few directories, contents drawn from a pool so that renames have several candidates. */
  function largeCase(rng: Random, entries: number) {
    const directories = Array.from({ length: 1 + rng.below(60) }, () => path(rng));
    const blobs = Array.from({ length: 1 + rng.below(entries) }, (_, index) => (index === 0 ? BLOBS[0] : hexId(rng)) as string);
    const paths = Array.from(
      { length: entries },
      (_, index) => `${rng.pick(directories)}/f${index % 997}.${rng.pick(["ts", "md", "test.ts"])}`,
    );
    const state = () => (rng.below(5) === 0 ? null : { mode: rng.pick(MODES), blob: rng.pick(blobs) });
    const list = <Entry extends { path: string }>(make: (p: string) => Entry): Entry[] => {
      const out = Array.from({ length: rng.below(entries) }, () => make(rng.pick(paths)));
      // Repeated paths must agree or the reference throws: keep one entry per path.
      const unique = [...new Map(out.map((entry) => [entry.path, entry])).values()];
      if (rng.below(4) > 0) unique.sort((left, right) => compareUnits(left.path, right.path));
      return unique;
    };
    const head = "a".repeat(40);
    const snapshot = { type: "git" as const, head, dirty: list((p) => ({ path: p, head: state(), worktree: state() })) };
    const changes = {
      type: "git" as const,
      start_head: head,
      head: "b".repeat(40),
      committed: list((p) => ({ path: p, before: state(), after: state() })),
      dirty: list((p) => ({ path: p, head: state(), worktree: state() })),
    };
    return { snapshot, changes };
  }
  function hexId(rng: Random): string {
    return Array.from({ length: 40 }, () => "0123456789abcdef"[rng.below(16)]).join("");
  }

  it.each([1, 2, 3])("thousands of entries, sorted or not, give the same net changes, summary and scope (seed %i)", (seed) => {
    const rng = random(1000 + seed);
    for (let round = 0; round < 12; round++) {
      const { snapshot, changes } = largeCase(rng, 500 + rng.below(4000));
      const expected = referenceNetChanges(snapshot, changes);
      const actual = computeNetChanges(snapshot, changes);
      expect(actual, `seed ${seed} round ${round}`).toEqual(expected);
      expect(summarizeChanges(actual)).toEqual(referenceSummary(expected));
      // Changes out of path order (a caller may pass any list): the lists are sorted all the same.
      const reversed = [...actual].reverse();
      expect(summarizeChanges(reversed)).toEqual(referenceSummary(reversed));
      const areas = Array.from({ length: 1 + rng.below(4) }, () => rng.pick(AREAS));
      const paths = actual.map((change) => change.path);
      if (rng.below(3) === 0) paths.reverse();
      expect(checkScope(areas, paths), JSON.stringify(areas)).toEqual(referenceCheckScope(areas, paths));
    }
  });
});

describe("scope check against the implementation it replaced", () => {
  it.each([1, 2, 3, 4])("same verdicts, order and warnings on 1,000 random path lists (seed %i)", (seed) => {
    const rng = random(100 + seed);
    for (let round = 0; round < 1000; round++) {
      const areas = Array.from({ length: rng.below(4) }, () => rng.pick(AREAS));
      const paths = Array.from({ length: rng.below(40) }, () => path(rng));
      if (rng.below(2) === 0) paths.sort(compareUnits);
      // Small budgets too: the steps counted must be the same for the same files to go unchecked.
      const budget = rng.below(3) === 0 ? rng.below(400) : undefined;
      expect(checkScope(areas, paths, budget), `seed ${seed} round ${round}: ${JSON.stringify({ areas, paths, budget })}`).toEqual(
        referenceCheckScope(areas, paths, budget),
      );
    }
  });

  it("one area on one path: the same verdict and the same steps counted", () => {
    const rng = random(7);
    for (let round = 0; round < 5000; round++) {
      const area = rng.pick(AREAS);
      const target = path(rng);
      const counter = { steps: 0 };
      const referenceCounter = { steps: 0 };
      expect(matchesArea(area, target, counter)).toBe(referenceMatchesArea(area, target, referenceCounter));
      expect(counter.steps, JSON.stringify({ area, target })).toBe(referenceCounter.steps);
    }
  });

  it("globs with long segments and many tokens (past the bit-set width) count the same steps", () => {
    const rng = random(11);
    const glob = (pattern: string, target: string) => {
      const counter = { steps: 0 };
      const referenceCounter = { steps: 0 };
      const compiled = compileGlob(pattern);
      const reference = referenceCompileGlob(pattern);
      if (!("glob" in compiled) || !("glob" in reference)) throw new Error(`not a glob: ${pattern}`);
      expect(compiled.glob.matches(target, counter), JSON.stringify({ pattern, target })).toBe(
        reference.glob.matches(target, referenceCounter),
      );
      expect(counter.steps, JSON.stringify({ pattern, target })).toBe(referenceCounter.steps);
    };
    const pieces = ["*", "a", "?", "[a-c]", "[!b]", "b", "\\*", "é", "😀"];
    for (let round = 0; round < 3000; round++) {
      const segments = Array.from({ length: 1 + rng.below(3) }, () =>
        rng.below(5) === 0 ? "**" : Array.from({ length: 1 + rng.below(rng.below(2) === 0 ? 6 : 40) }, () => rng.pick(pieces)).join(""),
      );
      const target = Array.from({ length: 1 + rng.below(4) }, () =>
        Array.from({ length: rng.below(50) }, () => rng.pick(["a", "b", "c", "A", "é", "😀", "*", "\uD800"])).join(""),
      ).join("/");
      glob(segments.join("/"), target);
    }
  });
});
