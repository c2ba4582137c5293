import { readFileSync } from "node:fs";
import { join } from "node:path";
import { traceRecord } from "@waymark/protocol/agent-trace";
import { carryLine, diffHunks, parseTraceRecords, TraceIndex } from "@waymark/protocol/trace-blame";
import { Ajv2020 } from "ajv/dist/2020.js";
import addFormats from "ajv-formats";
import { afterAll, describe, expect, it } from "vitest";
import { cleanupTempDirs, Repo } from "./fixtures";

// The pieces of `waymark blame` and the Agent Trace record that need no server: line numbers
// carried through a real `git diff -U0`, records read leniently but with named errors, and
// records checked against the JSON Schema written from the spec (which must also refuse).

afterAll(cleanupTempDirs);

const schema = JSON.parse(readFileSync(join(import.meta.dirname, "../../docs/schemas/agent-trace-record.json"), "utf8"));
const ajv = new Ajv2020({ allErrors: true, strict: true });
addFormats.default(ajv);
const validRecord = ajv.compile(schema);

const numbered = (n: number, prefix = "line") => Array.from({ length: n }, (_, i) => `${prefix} ${i + 1}\n`).join("");

describe("carrying a line through git's diff", () => {
  it("maps every kept line of the old side to its place on the new side, and a removed one to null", () => {
    const before = numbered(30);
    const lines = before.split("\n").slice(0, 30);
    // Insert two lines after 3, rewrite 10, delete 20-21, append one.
    const after = [
      ...lines.slice(0, 3),
      "new a",
      "new b",
      ...lines.slice(3, 9),
      "rewritten 10",
      ...lines.slice(10, 19),
      ...lines.slice(21),
      "tail",
    ]
      .map((l) => `${l}\n`)
      .join("");
    const repo = Repo.init().write("f.txt", before).commitAll("before");
    const from = repo.git("rev-parse", "HEAD").trim();
    repo.write("f.txt", after).commitAll("after");
    const hunks = diffHunks(repo.git("diff", "-U0", from, "HEAD", "--", "f.txt"));
    const newLines = after.split("\n");
    for (let old = 1; old <= 30; old++) {
      const carried = carryLine(hunks, old);
      if (old === 10 || old === 20 || old === 21) expect(carried, `line ${old}`).toBeNull();
      else expect(newLines[(carried as number) - 1], `line ${old}`).toBe(`line ${old}`);
    }
  });
});

describe("reading Agent Trace records", () => {
  const revision = "a".repeat(40);
  const record = (extra: Record<string, unknown> = {}) => ({
    version: "0.1.0",
    id: "550e8400-e29b-41d4-a716-446655440000",
    timestamp: "2026-01-25T10:00:00Z",
    vcs: { type: "git", revision },
    files: [
      {
        path: "src/a.ts",
        conversations: [
          {
            contributor: { type: "ai", model_id: "openai/gpt-5" },
            ranges: [
              { start_line: 3, end_line: 5 },
              { start_line: 9, end_line: 9, contributor: { type: "unknown" } },
            ],
          },
        ],
      },
    ],
    ...extra,
  });

  it("names the record and the field that breaks its rule", () => {
    expect(() => parseTraceRecords([record(), { ...record(), vcs: { type: "git" } }])).toThrow(
      "record 1: vcs.revision: must be a hex commit id",
    );
    const badRange = record();
    (badRange.files[0]?.conversations[0]?.ranges[0] as { start_line: number }).start_line = 0;
    expect(() => parseTraceRecords(badRange)).toThrow("record 0: files.0.conversations.0.ranges.0.start_line: must be a whole number ≥ 1");
    expect(() => parseTraceRecords([{ ...record(), files: {} }])).toThrow("record 0: files: must be an array");
  });

  it("gives a record of another tool (no task metadata) its ranges, and its other lines to no one", () => {
    const index = new TraceIndex(parseTraceRecords([record()]));
    const at = index.recordsOf(revision);
    expect(at && "at" in at).toBe(true);
    const records = at && "at" in at ? at.at : [];
    expect(TraceIndex.attribute(records, "src/a.ts", 4)).toMatchObject({ who: "agent", model_id: "openai/gpt-5" });
    expect(TraceIndex.attribute(records, "src/a.ts", 9)).toMatchObject({ who: "others" });
    expect(TraceIndex.attribute(records, "src/a.ts", 6).who).toBe("not_recorded");
    expect(index.recordsOf("b".repeat(40))).toBeNull();
  });

  it("a Waymark record: lines of its commits outside the ranges are not observed; abbreviated ids match", () => {
    const meta = { "dev.waymark": { task_id: "t1", workflow_id: "w1", task_name: "Task", commits: [revision, "bbbbbbb"] } };
    const index = new TraceIndex(parseTraceRecords([record({ metadata: meta })]));
    const at = index.recordsOf(revision);
    expect(TraceIndex.attribute(at && "at" in at ? at.at : [], "src/a.ts", 6)).toMatchObject({
      who: "not_observed",
      task: "Task",
      task_id: "t1",
    });
    const during = index.recordsOf("b".repeat(40));
    expect(during && "during" in during).toBe(true);
    expect(index.carriedPairs("src/a.ts")).toEqual([["bbbbbbb", revision]]);
  });
});

describe("the Agent Trace record of a task", () => {
  const task = {
    workflow_id: "wf_1",
    task_id: "wf_1.t1",
    name: "Task",
    completed_at: "2026-11-27T10:00:00.123Z",
    start_revision: "c".repeat(40),
    revision: "d".repeat(40),
    commits: ["d".repeat(40)],
    model: "claude-opus-4-5-20251101",
    url: "https://waymark.example/s/tok#wf_1.t1",
  };
  const files = [
    {
      path: "a.ts",
      ranges: [
        { start_line: 1, end_line: 2, author: "agent" as const, content_hash: "0123456789abcdef" },
        { start_line: 3, end_line: 3, author: "others" as const, content_hash: "fedcba9876543210" },
        { start_line: 4, end_line: 6, author: "not_observed" as const, content_hash: "0000000000000000" },
      ],
    },
    { path: "left.ts", ranges: [{ start_line: 1, end_line: 1, author: "agent" as const, content_hash: "1111111111111111" }] },
  ];

  it("is valid against the schema; a tool only with its version; not observed lines and uncommitted files in the metadata", () => {
    const withVersion = traceRecord({ ...task, tool: { name: "claude-code", version: "2.1.3" } }, files, new Set(["left.ts"]));
    expect(validRecord(withVersion), JSON.stringify(validRecord.errors)).toBe(true);
    expect(withVersion.tool).toEqual({ name: "claude-code", version: "2.1.3" });
    expect(withVersion.timestamp).toBe("2026-11-27T10:00:00Z");
    expect(withVersion.files).toEqual([
      {
        path: "a.ts",
        conversations: [
          {
            url: task.url,
            related: [{ type: "waymark-task", url: task.url }],
            contributor: { type: "ai", model_id: "anthropic/claude-opus-4-5-20251101" },
            ranges: [
              { start_line: 1, end_line: 2, content_hash: "sha256:0123456789abcdef" },
              { start_line: 3, end_line: 3, content_hash: "sha256:fedcba9876543210", contributor: { type: "unknown" } },
            ],
          },
        ],
      },
    ]);
    expect(withVersion.metadata["dev.waymark"]).toMatchObject({
      agent: "claude-code",
      not_observed: [{ path: "a.ts", lines: 3 }],
      not_in_revision: ["left.ts"],
    });
    const withoutVersion = traceRecord({ ...task, tool: { name: "codex" }, model: "some-local-model" }, files, new Set());
    expect(validRecord(withoutVersion), JSON.stringify(validRecord.errors)).toBe(true);
    expect(withoutVersion.tool).toBeUndefined();
    // A model of an unknown provider is no models.dev id: the contributor is "ai" without one.
    expect(withoutVersion.files[0]?.conversations[0]?.contributor).toEqual({ type: "ai" });
  });

  it("the schema refuses what the spec's schema (README §6.1) refuses, today's two-part version included", () => {
    const good = traceRecord(task, files, new Set());
    expect(good.version).toBe("0.1.0");
    // What Waymark guarantees beyond the spec: a full git revision and a UTC timestamp.
    expect(good.vcs.revision).toMatch(/^[0-9a-f]{40}$/);
    expect(good.timestamp).toMatch(/Z$/);
    const { id: _id, ...withoutId } = good;
    const broken: [string, unknown][] = [
      ["a major.minor version (the early draft's)", { ...good, version: "0.1" }],
      ["a version that is not semver", { ...good, version: "v1" }],
      ["no id", withoutId],
      ["an id that is no UUID", { ...good, id: "task-1" }],
      ["a timestamp that is no RFC 3339 date-time", { ...good, timestamp: "27/11/2026" }],
      ["an unknown version control system", { ...good, vcs: { type: "cvs", revision: "1.1" } }],
      ["a line 0", { ...good, files: [{ path: "a", conversations: [{ ranges: [{ start_line: 0, end_line: 1 }] }] }] }],
      ["a file without conversations", { ...good, files: [{ path: "a" }] }],
      [
        "a contributor type outside the four",
        { ...good, files: [{ path: "a", conversations: [{ contributor: { type: "bot" }, ranges: [] }] }] },
      ],
      [
        "a model id over 250 characters",
        { ...good, files: [{ path: "a", conversations: [{ contributor: { type: "ai", model_id: `a/${"b".repeat(250)}` }, ranges: [] }] }] },
      ],
    ];
    for (const [what, record] of broken) expect(validRecord(record), what).toBe(false);
  });
});
