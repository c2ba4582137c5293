import { describe, expect, it } from "vitest";
import { checkScope, matchesArea } from "../../src/domain/scope";

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
