import { comparePaths, decodeWirePath, displayPath, encodePathBytes, isEscapedPath, repoPathProblem } from "@waymark/protocol/paths";
import { describe, expect, it } from "vitest";

// Titles name each case instead of printing the path: a lone surrogate in a test title cannot
// be sent from workerd to the runner (invalid UTF-8 on its WebSocket), and 4 KiB titles are noise.
describe("repoPathProblem", () => {
  it.each([
    { case: "file at the root", path: "README.md" },
    { case: "nested file", path: "src/auth/config.ts" },
    { case: "dot directory", path: ".github/workflows/ci.yml" },
    { case: "non-ASCII and a space", path: "docs/naïve café.md" },
    { case: "double quotes", path: 'say "hi".txt' },
    { case: "newline", path: "line\nbreak.txt" },
    { case: "backslash (a legal file name character)", path: "back\\slash" },
    { case: "dots that are not . or ..", path: "..hidden/...three" },
    { case: "CJK and an emoji", path: "日本語/ファイル 😀.ts" },
    { case: "leading and trailing spaces", path: " spaced " },
    { case: "exactly 4096 ASCII bytes", path: "a".repeat(4096) },
    { case: "exactly 4096 bytes of two-byte characters", path: "é".repeat(2048) },
  ])("valid: $case", ({ path }) => {
    expect(repoPathProblem(path)).toBeNull();
  });

  it.each([
    { case: "empty", path: "", problem: "must not be empty" },
    { case: "NUL", path: "a\0b", problem: "must not contain NUL" },
    { case: "4097 ASCII bytes", path: "a".repeat(4097), problem: "must be at most 4096 UTF-8 bytes (is 4097)" },
    { case: "4098 bytes of two-byte characters", path: "é".repeat(2049), problem: "must be at most 4096 UTF-8 bytes (is 4098)" },
    { case: "4100 bytes of emoji", path: "😀".repeat(1025), problem: "must be at most 4096 UTF-8 bytes (is 4100)" },
    { case: "lone high surrogate", path: "bad\ud800.txt", problem: "must be well-formed Unicode (no lone surrogate)" },
    { case: "lone low surrogate", path: "bad\udc00.txt", problem: "must be well-formed Unicode (no lone surrogate)" },
    { case: "high surrogate at the end", path: "bad\ud800", problem: "must be well-formed Unicode (no lone surrogate)" },
    { case: "absolute", path: "/etc/passwd", problem: 'must be relative to the repository root (no leading "/")' },
    { case: "double slash", path: "src//a.ts", problem: 'must not contain an empty segment ("//" or a trailing "/")' },
    { case: "trailing slash", path: "src/", problem: 'must not contain an empty segment ("//" or a trailing "/")' },
    { case: "leading ./", path: "./a.ts", problem: 'must not contain a "." segment' },
    { case: ". in the middle", path: "src/./a.ts", problem: 'must not contain a "." segment' },
    { case: "leading ../", path: "../outside", problem: 'must not contain a ".." segment' },
    { case: "trailing ..", path: "src/..", problem: 'must not contain a ".." segment' },
  ])("invalid: $case → $problem", ({ path, problem }) => {
    expect(repoPathProblem(path)).toBe(problem);
  });
});

describe("comparePaths", () => {
  it.each([
    { left: "a", right: "b", order: -1 },
    { left: "b", right: "a", order: 1 },
    { left: "a", right: "a", order: 0 },
    { left: "B", right: "a", order: -1 },
    { left: "a/b", right: "a.b", order: 1 },
    { left: "z", right: "é", order: -1 },
  ])("$left vs $right → $order", ({ left, right, order }) => {
    expect(comparePaths(left, right)).toBe(order);
  });
});

const bytes = (...parts: (string | number[])[]) =>
  Uint8Array.from(parts.flatMap((part) => (typeof part === "string" ? [...new TextEncoder().encode(part)] : part)));

describe("wire form of file names (bytes)", () => {
  it.each([
    { case: "ASCII name", name: bytes("src/a.ts"), wire: "src/a.ts", shown: "src/a.ts" },
    { case: "valid UTF-8 travels as text", name: bytes("café/naïve.md"), wire: "café/naïve.md", shown: "café/naïve.md" },
    { case: "a BOM at the start is kept", name: bytes([0xef, 0xbb, 0xbf], "x"), wire: "\ufeffx", shown: "\ufeffx" },
    { case: "Latin-1 é", name: bytes("lat", [0xe9], ".txt"), wire: "/lat%E9.txt", shown: "lat\\xE9.txt" },
    { case: "a % in an escaped name", name: bytes("100%", [0xff]), wire: "/100%25%FF", shown: "100%\\xFF" },
    { case: "valid UTF-8 next to an invalid byte", name: bytes("é/", [0xe9]), wire: "/%C3%A9/%E9", shown: "é/\\xE9" },
    { case: "truncated sequence", name: bytes([0xe2, 0x82], "a"), wire: "/%E2%82a", shown: "\\xE2\\x82a" },
    { case: "UTF-8-encoded surrogate (invalid)", name: bytes([0xed, 0xa0, 0x80]), wire: "/%ED%A0%80", shown: "\\xED\\xA0\\x80" },
    { case: "newline and tab in an escaped name", name: bytes("a\n\t", [0x80]), wire: "/a%0A%09%80", shown: "a\n\t\\x80" },
  ])("$case", ({ name, wire, shown }) => {
    expect(encodePathBytes(name)).toBe(wire);
    expect(decodeWirePath(wire)).toEqual(name);
    expect(displayPath(wire)).toBe(shown);
    expect(repoPathProblem(wire)).toBeNull();
    expect(isEscapedPath(wire)).toBe(wire.startsWith("/"));
  });

  it("two names that differ in one invalid byte stay two paths", () => {
    expect(encodePathBytes(bytes("lat", [0xe9]))).not.toBe(encodePathBytes(bytes("lat", [0xe8])));
  });

  it.each([
    { case: "lowercase hex", wire: "/lat%e9.txt" },
    { case: "an ASCII byte escaped", wire: "/%41%E9" },
    { case: "a bare %", wire: "/%E9%" },
    { case: "a non-ASCII character in the escaped form", wire: "/é%E9" },
    { case: "a NUL byte", wire: "/a%00%E9" },
    { case: "an escaped leading slash", wire: "/%2F%E9" },
    { case: "a .. segment", wire: "/../%E9" },
    { case: "an empty segment", wire: "/a//%E9" },
    { case: "5000 escaped bytes", wire: `/${"%E9".repeat(5000)}` },
  ])("refused: $case", ({ wire }) => {
    expect(repoPathProblem(wire)).not.toBeNull();
  });
});
