import { compileGlob, expandBraces, globProblem, MAX_BRACE_EXPANSIONS } from "@waymark/protocol/glob";
import picomatch from "picomatch/posix";
import { describe, expect, it } from "vitest";
import { checkScope, matchesArea } from "../../src/domain/area-scope";

describe("matchesArea", () => {
  it.each([
    // DESIGN.md: a bare word is a whole path segment or a file's stem.
    { area: "auth", path: "src/auth/x.ts", matches: true },
    { area: "auth", path: "auth.ts", matches: true },
    { area: "auth", path: "auth.test.ts", matches: true },
    { area: "auth", path: "AUTH.md", matches: true },
    { area: "auth", path: "src/middleware/auth", matches: true },
    { area: "auth", path: "authors.md", matches: false },
    { area: "auth", path: "src/oauth.ts", matches: false },
    { area: "auth", path: "src/authz/x.ts", matches: false },
    { area: "auth", path: "src/auth.d/x.ts", matches: false },
    { area: "api", path: "rapid/x.ts", matches: false },
    { area: "api", path: "src/api/users.ts", matches: true },
    { area: "auth.test", path: "src/auth.test.ts", matches: true },
    { area: "package.json", path: "package.json", matches: true },
    { area: "package.json", path: "apps/web/package.json", matches: true },
    { area: "package", path: "package-lock.json", matches: false },
    { area: "env", path: ".env.local", matches: true },
    { area: ".env", path: ".env.local", matches: true },
    { area: "Auth", path: "SRC/AUTH/X.TS", matches: true },
    { area: "café", path: "docs/CAFÉ.md", matches: true },
    { area: "  auth  ", path: "auth.ts", matches: true },
    { area: "", path: "auth.ts", matches: false },
    // Anything with "/" or a glob character is a path glob anchored at the root.
    { area: "src/api/**", path: "src/api/users.ts", matches: true },
    { area: "src/api/**", path: "src/api/v1/deep/users.ts", matches: true },
    { area: "src/api/**", path: "src/apis/users.ts", matches: false },
    { area: "src/api/**", path: "lib/src/api/users.ts", matches: false },
    { area: "src/api/", path: "src/api/users.ts", matches: true },
    { area: "src/api/", path: "src/api/v1/users.ts", matches: true },
    { area: "src/api/", path: "src/api.ts", matches: false },
    { area: "src/api", path: "src/api/users.ts", matches: true },
    { area: "src/api", path: "src/api", matches: true },
    { area: "/src/api/", path: "src/api/users.ts", matches: true },
    { area: "./src/api", path: "src/api/users.ts", matches: true },
    { area: "src/*.ts", path: "src/index.ts", matches: true },
    { area: "src/*.ts", path: "src/lib/index.ts", matches: false },
    { area: "src/*", path: "src/lib/index.ts", matches: true },
    { area: "SRC/API/**", path: "src/api/users.ts", matches: true },
    { area: "src/api/**", path: "src/api/.env", matches: true },
    { area: "src/**", path: "src/.config/x.json", matches: true },
    { area: "**/*.md", path: "docs/guide/intro.md", matches: true },
    { area: "**/*.md", path: "README.md", matches: true },
    { area: "*.md", path: "docs/guide/intro.md", matches: true },
    { area: "*.md", path: "docs/guide/intro.mdx", matches: false },
    { area: "auth*", path: "src/authz/x.ts", matches: true },
    { area: "{auth,api}", path: "src/api/users.ts", matches: true },
    { area: "src/{auth,api}/**", path: "src/auth/x.ts", matches: true },
    { area: "test?.ts", path: "test1.ts", matches: true },
    { area: "[ab].ts", path: "lib/b.ts", matches: true },
    { area: "[ab].ts", path: "lib/c.ts", matches: false },
    { area: "/", path: "anything/at/all.ts", matches: true },
    { area: "docs/naïve café/", path: "docs/naïve café/a b.md", matches: true },
    // A leading "!" excludes what follows; alone, it lets in everything else.
    { area: "!src/legacy/**", path: "src/legacy/old.ts", matches: false },
    { area: "!src/legacy/**", path: "src/new.ts", matches: true },
    { area: "!auth", path: "src/auth/x.ts", matches: false },
    { area: "!", path: "x.ts", matches: false },
  ])("$area ~ $path → $matches", ({ area, path, matches }) => {
    expect(matchesArea(area, path)).toBe(matches);
  });
});

const noScope = { scope_match: true, unexpected_files: [], warnings: [] };

describe("checkScope", () => {
  it.each([
    {
      situation: "no areas declared",
      areas: undefined,
      paths: ["x.ts"],
      expected: noScope,
    },
    { situation: "empty areas", areas: [], paths: ["x.ts"], expected: noScope },
    {
      situation: "only blank areas",
      areas: ["", "  "],
      paths: ["x.ts"],
      expected: noScope,
    },
    {
      situation: "everything inside",
      areas: ["auth", "api"],
      paths: ["src/auth/x.ts", "api.ts", "auth.test.ts"],
      expected: noScope,
    },
    {
      situation: "the reference example: utils.ts outside (auth, api)",
      areas: ["auth", "api"],
      paths: ["auth.ts", "api.ts", "utils.ts"],
      expected: {
        scope_match: false,
        unexpected_files: ["utils.ts"],
        warnings: ["1 file(s) changed outside declared scope (auth, api)"],
      },
    },
    {
      situation: "several outside, sorted and counted once",
      areas: ["src/api/"],
      paths: ["src/api/a.ts", "rapid/x.ts", "authors.md", "rapid/x.ts"],
      expected: {
        scope_match: false,
        unexpected_files: ["authors.md", "rapid/x.ts"],
        warnings: ["2 file(s) changed outside declared scope (src/api/)"],
      },
    },
    {
      situation: "words and globs mixed, case-insensitive",
      areas: ["Auth", "src/API/**", "*.md"],
      paths: ["src/auth/x.ts", "src/api/v1/users.ts", "docs/README.MD", "package.json"],
      expected: {
        scope_match: false,
        unexpected_files: ["package.json"],
        warnings: ["1 file(s) changed outside declared scope (Auth, src/API/**, *.md)"],
      },
    },
    {
      situation: "an exclusion carves out of an inclusion",
      areas: ["src/**", "!src/legacy/"],
      paths: ["src/new.ts", "src/legacy/old.ts"],
      expected: {
        scope_match: false,
        unexpected_files: ["src/legacy/old.ts"],
        warnings: ["1 file(s) changed outside declared scope (src/**, !src/legacy/)"],
      },
    },
    {
      situation: "no paths changed",
      areas: ["auth"],
      paths: [],
      expected: noScope,
    },
  ])("$situation", ({ areas, paths, expected }) => {
    expect(checkScope(areas, paths)).toEqual(expected);
  });

  it("checks many paths against many areas", () => {
    const areas = Array.from({ length: 50 }, (_, index) => `area${index}`).concat(["src/generated/**"]);
    const paths = Array.from({ length: 20_000 }, (_, index) =>
      index % 2 === 0 ? `src/area${index % 50}/file${index}.ts` : `src/generated/file${index}.ts`,
    ).concat(["outside/x.ts"]);
    expect(checkScope(areas, paths).unexpected_files).toEqual(["outside/x.ts"]);
  });
});

describe("glob syntax (the linear matcher)", () => {
  it.each([
    { area: "src/**/test/*.ts", path: "src/a/b/test/x.ts", matches: true },
    { area: "src/**/test/*.ts", path: "src/test/x.ts", matches: true },
    { area: "src/**/test/*.ts", path: "src/a/test/b/c.js", matches: false },
    { area: "src/**/**/x.ts", path: "src/x.ts", matches: true },
    { area: "src/*/**", path: "src/a", matches: true },
    { area: "src/**", path: "src", matches: true },
    { area: "src/a**b.ts", path: "src/axxb.ts", matches: true },
    { area: "src/a**b.ts", path: "src/ax/b.ts", matches: false },
    { area: "src/[!a]*.ts", path: "src/b.ts", matches: true },
    { area: "src/[^a]*.ts", path: "src/a.ts", matches: false },
    { area: "src/[a-c]x.ts", path: "src/Bx.ts", matches: true },
    { area: "src/[a-c]x.ts", path: "src/dx.ts", matches: false },
    { area: "src/[]x.ts", path: "src/[]x.ts", matches: true },
    { area: "src/\\*.ts", path: "src/*.ts", matches: true },
    { area: "src/\\*.ts", path: "src/a.ts", matches: false },
    { area: "src/{a,{b,c}}/**", path: "src/c/x.ts", matches: true },
    { area: "src/{a,b}{1,2}.ts", path: "src/b2.ts", matches: true },
    { area: "src/{a}.ts", path: "src/{a}.ts", matches: true },
    { area: "src/{a,b.ts", path: "src/{a,b.ts", matches: true },
    { area: "src/?.ts", path: "src/é.ts", matches: true },
    { area: "src/?.ts", path: "src/ab.ts", matches: false },
  ])("$area ~ $path → $matches", ({ area, path, matches }) => {
    expect(matchesArea(area, path)).toBe(matches);
  });

  it.each([
    { pattern: "{a,b}", expanded: ["a", "b"] },
    { pattern: "x{a,{b,c}}y", expanded: ["xay", "xby", "xcy"] },
    { pattern: "{a,b}{c,d}", expanded: ["ac", "ad", "bc", "bd"] },
    { pattern: "{a}", expanded: ["{a}"] },
    { pattern: "\\{a,b}", expanded: ["\\{a,b}"] },
    { pattern: "{a,b}{c,d}{e,f}{g,h}", expanded: null },
  ])("braces: $pattern", ({ pattern, expanded }) => {
    expect(expandBraces(pattern)).toEqual(expanded);
  });

  it("refuses areas whose braces expand past the cap, by name", () => {
    expect(globProblem("{a,b}{c,d}{e,f}")).toBe(null);
    expect(globProblem("{a,b}{c,d}{e,f}{g,h}")).toBe(`braces expand to more than ${MAX_BRACE_EXPANSIONS} patterns`);
  });

  // Except where picomatch is inconsistent: it lets "a/**" match "a" but not "*/**" match "a" (here
  // a trailing globstar always also matches the directory itself), and "**/[!a]" does not match "b"
  // there. The tables above pin those cases down.
  it("agrees with picomatch on random patterns and paths without braces", () => {
    // A fixed pseudo-random sequence, so a failure replays.
    let seed = 42;
    const random = (n: number) => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed % n;
    };
    const pick = <T>(items: readonly T[]) => items[random(items.length)] as T;
    const segmentPattern = () => Array.from({ length: 1 + random(4) }, () => pick(["a", "b", "*", "?", "[ab]", "[a-b]"])).join("");
    const disagreements: string[] = [];
    for (let round = 0; round < 3000; round++) {
      const pattern = [...Array.from({ length: random(3) }, () => (random(4) === 0 ? "**" : segmentPattern())), segmentPattern()].join("/");
      const path = Array.from({ length: 1 + random(4) }, () =>
        Array.from({ length: 1 + random(4) }, () => pick(["a", "b", "A"])).join(""),
      ).join("/");
      const expected = picomatch([pattern, `${pattern}/**`], { dot: true, nocase: true })(path);
      const compiled = compileGlob(pattern);
      const actual = "glob" in compiled && compiled.glob.matches(path);
      if (actual !== expected) disagreements.push(`${pattern} ~ ${path}: picomatch ${expected}`);
    }
    expect(disagreements.slice(0, 10)).toEqual([]);
  });
});

describe("untrusted areas cost linear time", () => {
  const attack = "**/*a*a*a*a*a*a*a*a*a*b";
  const steps = (area: string, path: string) => {
    const counter = { steps: 0 };
    expect(matchesArea(area, path, counter)).toBe(false);
    return counter.steps;
  };

  it.each([
    { shape: "one long segment", path: (n: number) => "a".repeat(n) },
    { shape: "many short segments", path: (n: number) => Array.from({ length: n / 10 }, () => "a".repeat(9)).join("/") },
    { shape: "deep directories", path: (n: number) => `${"a/".repeat(n / 2 - 1)}a` },
  ])("$shape: doubling the path at most doubles the steps, within path × pattern", ({ path }) => {
    const small = steps(attack, path(2000));
    const large = steps(attack, path(4000));
    expect(large).toBeLessThanOrEqual(2 * small + 100);
    expect(large).toBeLessThanOrEqual(4000 * attack.length);
  });

  it("the worst area allowed stays within path × pattern steps", () => {
    const worst = `**/${"*a".repeat(98)}b`;
    const path = "a".repeat(4000);
    expect(steps(worst, path)).toBeLessThanOrEqual(path.length * worst.length);
  });

  it("stops at the step budget and says which files went unchecked", () => {
    const paths = Array.from({ length: 50 }, (_, index) => `${"a".repeat(2000)}${index}`);
    const verification = checkScope([attack], paths, 100_000);
    expect(verification.scope_match).toBe(false);
    expect(verification.warnings.at(-1)).toMatch(/^scope not checked for \d+ file\(s\): the declared areas are too costly to match$/);
    const unchecked = Number(/for (\d+) file/.exec(verification.warnings.at(-1) ?? "")?.[1]);
    expect(unchecked + verification.unexpected_files.length).toBe(paths.length);
    expect(unchecked).toBeGreaterThan(40);
  });
});
