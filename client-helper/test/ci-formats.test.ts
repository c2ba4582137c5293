/**
 * What `waymark ci` writes for the CI platforms, in their own formats: GitHub's workflow commands
 * (annotations escaped as the runner's toolkit escapes them, at most 10 of a kind), GITHUB_OUTPUT's
 * delimiter syntax (a value can neither end its block early nor set another output), summaries cut
 * within GitHub's bound; and the policy file read as bounded, strict YAML whose published schema
 * (docs/schemas/policy-v1.json, checked with ajv) agrees with the helper's reading of it.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import Ajv2020 from "ajv/dist/2020.js";
import { afterAll, describe, expect, it } from "vitest";
import { parse } from "yaml";
import { PolicyFileError, parsePolicyText, readPolicyFile } from "../src/ci/policy-file.js";
import {
  ANNOTATIONS_PER_KIND,
  annotationCommand,
  annotationCommands,
  boundedMarkdown,
  escapeData,
  escapeProperty,
  writeOutputs,
} from "../src/ci/workflow-commands.js";
import { cleanupTempDirs, tempDir } from "./fixtures.js";

afterAll(() => cleanupTempDirs());

describe("GitHub's workflow commands", () => {
  it.each([
    ["100% done", "100%25 done", "100%25 done"],
    ["line one\nline two\r\n", "line one%0Aline two%0D%0A", "line one%0Aline two%0D%0A"],
    ["a,b:c", "a,b:c", "a%2Cb%3Ac"],
    ["::error::fake", "::error::fake", "%3A%3Aerror%3A%3Afake"],
  ])("escapes %j as data and as a property", (text, data, property) => {
    expect(escapeData(text)).toBe(data);
    expect(escapeProperty(text)).toBe(property);
  });

  it("an annotation names the file and lines, and agent text cannot start a command of its own", () => {
    const line = annotationCommand({
      kind: "warning",
      file: "src/a,b.ts",
      line: 3,
      endLine: 5,
      title: "Tests: task Fix, it",
      message: "no run\n::add-mask::secret",
    });
    expect(line).toBe("::warning file=src/a%2Cb.ts,line=3,endLine=5,title=Tests%3A task Fix%2C it::no run%0A::add-mask::secret");
    expect(line.split("\n")).toHaveLength(1);
    expect(annotationCommand({ kind: "error", file: "gone.ts", line: null, title: "t", message: "m" })).toBe(
      "::error file=gone.ts,title=t::m",
    );
  });

  it("keeps what GitHub shows per step (10 of each kind) and counts the rest", () => {
    const many = Array.from({ length: 13 }, (_, i) => ({ kind: "warning" as const, file: `f${i}`, line: 1, title: "t", message: "m" }));
    const { lines, left_out } = annotationCommands([...many, { kind: "error", file: "e", line: 1, title: "t", message: "m" }]);
    expect(lines).toHaveLength(ANNOTATIONS_PER_KIND + 1);
    expect(left_out).toBe(3);
  });

  it("writes outputs in the delimiter syntax: a multiline value, or one that looks like another output, stays one value", async () => {
    const file = join(tempDir("waymark-output-"), "output");
    writeFileSync(file, "earlier=1\n");
    await writeOutputs(file, { result: "failed", failure_list: "within_areas: a\nresult=passed\nEOF" });
    const text = readFileSync(file, "utf8");
    const blocks = [...text.matchAll(/^(\w+)<<(ghadelimiter_[0-9a-f-]{36})\n([\s\S]*?)\n\2\n/gm)].map((m) => [m[1], m[3]]);
    expect(blocks).toEqual([
      ["result", "failed"],
      ["failure_list", "within_areas: a\nresult=passed\nEOF"],
    ]);
    expect(text.startsWith("earlier=1\n")).toBe(true);
  });

  it("cuts a summary at whole lines within the bound, and says where the rest is", () => {
    const markdown = Array.from({ length: 100 }, (_, i) => `line ${i} ${"é".repeat(20)}`).join("\n");
    const cut = boundedMarkdown(markdown, 2000, "the job's log");
    expect(new TextEncoder().encode(cut).length).toBeLessThanOrEqual(2000);
    expect(cut).toContain("… cut to stay within 2000 bytes: the job's log");
    expect(boundedMarkdown("short", 2000, "x")).toBe("short");
  });
});

describe("the policy file", () => {
  const schema = JSON.parse(readFileSync(join(import.meta.dirname, "../../docs/schemas/policy-v1.json"), "utf8"));
  const validate = new Ajv2020({ strict: false }).compile(schema);

  it.each([
    ["the documented example", "version: 1\nrules:\n  verified: true\n  agent_line_share: 80\n", null],
    ["flow style", "{version: 1, rules: {within_areas: true}}", null],
    ["comments and a version only", "# report only\nversion: 1\n", null],
    ["YAML 1.1's yes is a string here", "version: 1\nrules:\n  verified: yes\n", "rules.verified: must be true or false"],
    ["a duplicate key", "version: 1\nversion: 1\n", "Map keys must be unique at line 2, column 1"],
    ["two documents", "version: 1\n---\nversion: 1\n", "must hold one YAML document, it holds 2"],
    ["an empty file", "", "is empty"],
    ["not YAML", "version: [1\n", "at line"],
    ["an unknown rule", "version: 1\nrules:\n  max_ai_percent: 50\n", "rules.max_ai_percent: not a field of the policy"],
  ])("%s", (_, text, problem) => {
    if (problem === null) {
      const policy = parsePolicyText(text, ".waymark/policy.yml");
      // The published schema accepts what the helper accepts.
      expect(validate(parse(text)), JSON.stringify(validate.errors)).toBe(true);
      expect(policy.version).toBe(1);
      return;
    }
    expect(() => parsePolicyText(text, ".waymark/policy.yml")).toThrow(PolicyFileError);
    expect(() => parsePolicyText(text, ".waymark/policy.yml")).toThrow(problem);
  });

  it("the published schema refuses what the helper refuses", () => {
    for (const document of [
      { version: 2 },
      { version: 1, rules: { verified: "yes" } },
      { version: 1, rules: { agent_line_share: 101 } },
      { version: 1, extra: 1 },
    ]) {
      expect(validate(document), JSON.stringify(document)).toBe(false);
    }
  });

  it("is bounded before it is parsed, and a missing file is no policy", async () => {
    const dir = tempDir("waymark-policy-");
    expect(await readPolicyFile(join(dir, "policy.yml"))).toBeNull();
    writeFileSync(join(dir, "big.yml"), `version: 1\n# ${"x".repeat(20_000)}\n`);
    await expect(readPolicyFile(join(dir, "big.yml"))).rejects.toThrow("more than a policy may be (16384)");
    // An alias bomb is refused by the library's alias bound, not expanded.
    const bomb = [
      "a: &a [x, x, x, x, x, x, x, x, x]",
      ...Array.from(
        { length: 8 },
        (_, i) =>
          `${String.fromCharCode(98 + i)}: &${String.fromCharCode(98 + i)} [*${String.fromCharCode(97 + i)}, *${String.fromCharCode(97 + i)}, *${String.fromCharCode(97 + i)}, *${String.fromCharCode(97 + i)}, *${String.fromCharCode(97 + i)}, *${String.fromCharCode(97 + i)}, *${String.fromCharCode(97 + i)}, *${String.fromCharCode(97 + i)}, *${String.fromCharCode(97 + i)}]`,
      ),
    ].join("\n");
    expect(() => parsePolicyText(bomb, "bomb.yml")).toThrow(PolicyFileError);
  });
});
