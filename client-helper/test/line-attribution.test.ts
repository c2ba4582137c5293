import { afterAll, describe, expect, it } from "vitest";
import { applyChunks, parsePatch } from "../src/agents/codex-patch.js";
import { attributeLines } from "../src/lines/attribute.js";
import type { LoggedEdit } from "../src/lines/edit-log.js";
import { agentCalled, cleanupTempDirs, tempDir } from "./fixtures.js";

afterAll(cleanupTempDirs);

/** What the named agent's module reads of an edit from its hook payload. */
const captured = (payload: Record<string, unknown>, agent: string) => agentCalled(agent).capturedEdits(payload);

const numbered = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => `line ${from + i}\n`).join("");

describe("Codex patches", () => {
  it("reads added, deleted, updated and moved files", () => {
    const files = parsePatch(
      "*** Begin Patch\n*** Add File: a.txt\n+one\n+two\n*** Delete File: b.txt\n*** Update File: c.txt\n*** Move to: d.txt\n@@ def f():\n-    return 1\n+    return 2\n*** End Patch",
    );
    expect(files).toEqual([
      { kind: "add", path: "a.txt", content: "one\ntwo\n" },
      { kind: "delete", path: "b.txt" },
      {
        kind: "update",
        path: "c.txt",
        moveTo: "d.txt",
        chunks: [{ context: "def f():", old: ["    return 1"], new: ["    return 2"], endOfFile: false }],
      },
    ]);
  });

  it.each([
    ["context then lines", "a\nb\nc\nb\n", [{ context: "c", old: ["b"], new: ["B"], endOfFile: false }], "a\nb\nc\nB\n"],
    ["first match from the start", "x\ny\nx\n", [{ context: null, old: ["x"], new: ["X"], endOfFile: false }], "X\ny\nx\n"],
    ["end of file from the end", "x\ny\nx\n", [{ context: null, old: ["x"], new: ["X"], endOfFile: true }], "x\ny\nX\n"],
    [
      "trailing whitespace ignored when nothing else matched",
      "a  \nb\n",
      [{ context: null, old: ["a"], new: ["A"], endOfFile: false }],
      "A\nb\n",
    ],
    ["typographic dashes read as ASCII", "a \u2014 b\n", [{ context: null, old: ["a - b"], new: ["c"], endOfFile: false }], "c\n"],
    ["pure insertion appends", "a\n", [{ context: null, old: [], new: ["b"], endOfFile: false }], "a\nb\n"],
    ["a final newline is added", "a", [{ context: null, old: ["a"], new: ["b"], endOfFile: false }], "b\n"],
  ])("applies chunks: %s", (_name, content, chunks, expected) => {
    expect(applyChunks(content, chunks)).toBe(expected);
  });

  it("refuses a chunk whose lines are not in the file", () => {
    expect(applyChunks("a\nb\n", [{ context: null, old: ["zzz"], new: ["y"], endOfFile: false }])).toBeNull();
  });
});

describe("what each agent's payload says about lines", () => {
  it("Claude Code: Write and Edit with the tool response's original content", () => {
    expect(
      captured(
        {
          tool_name: "Write",
          tool_input: { file_path: "/r/a.txt", content: "x\n" },
          tool_response: { type: "create", originalFile: null },
        },
        "claude",
      ),
    ).toEqual([{ path: "/r/a.txt", before: null, after: "x\n" }]);
    expect(
      captured(
        {
          tool_name: "Edit",
          tool_input: { file_path: "/r/a.txt", old_string: "b", new_string: "B\nC" },
          tool_response: { filePath: "/r/a.txt", oldString: "b", newString: "B\nC", originalFile: "a\nb\n", structuredPatch: [] },
        },
        "claude",
      ),
    ).toEqual([{ path: "/r/a.txt", before: "a\nb\n", after: "a\nB\nC\n" }]);
    // Without a tool response: the replacement, replayed later on the content the file had.
    expect(captured({ tool_name: "Edit", tool_input: { file_path: "a.txt", old_string: "b", new_string: "c" } }, "claude")).toEqual([
      { path: "a.txt", replacements: [{ old: "b", new: "c" }] },
    ]);
    expect(captured({ tool_name: "NotebookEdit", tool_input: { notebook_path: "n.ipynb", new_source: "x" } }, "claude")).toEqual([
      { path: "n.ipynb", skipped: "a notebook's cells were edited, not its lines" },
    ]);
  });

  it("Cursor: the replaced strings; Codex: the patch, from apply_patch or a shell heredoc", () => {
    expect(
      captured({ hook_event_name: "afterFileEdit", file_path: "/r/b.ts", edits: [{ old_string: "a", new_string: "b" }] }, "cursor"),
    ).toEqual([{ path: "/r/b.ts", replacements: [{ old: "a", new: "b" }] }]);
    const patch = "*** Begin Patch\n*** Add File: c.txt\n+c\n*** End Patch";
    expect(captured({ tool_name: "apply_patch", tool_input: { command: patch } }, "codex")).toEqual([{ path: "c.txt", after: "c\n" }]);
    expect(captured({ tool_name: "Bash", tool_input: { command: `apply_patch <<'EOF'\n${patch}\nEOF` } }, "codex")).toEqual([
      { path: "c.txt", after: "c\n" },
    ]);
    expect(captured({ tool_name: "Bash", tool_input: { command: "echo x > c.txt" } }, "codex")).toEqual([]);
  });

  it("keeps no content above the bound", () => {
    const big = "x".repeat(1024 * 1024 + 1);
    expect(captured({ tool_name: "Write", tool_input: { file_path: "a", content: big } }, "claude")).toEqual([
      { path: "a", skipped: "larger than 1 MiB when the agent edited it" },
    ]);
  });
});

describe("who wrote each added line", () => {
  const scratchRoot = tempDir("waymark-scratch-");
  const at = (n: number) => 1_700_000_000_000 + n;
  const count = (added: number, removed: number) => ({ path: "a.txt", added, removed });

  it("the agent's edit, then a person's edit of another line of the same file", async () => {
    const start = numbered(1, 10);
    const agent = start.replace("line 3\n", "agent 3\nagent 3b\n");
    const end = agent.replace("line 8\n", "person 8\n");
    const edits: LoggedEdit[] = [{ at: at(1), path: "a.txt", before: start, after: agent }];
    const file = { path: "a.txt", before: Buffer.from(start), after: Buffer.from(end), count: count(3, 2) };
    const out = await attributeLines([file], { edits, scratchRoot });
    expect(file.count).toEqual({ path: "a.txt", added: 3, removed: 2, agent: 2, others: 1, not_observed: 0 });
    expect(out.files[0]?.ranges.map(([s, e, who]) => [s, e, who])).toEqual([
      [3, 4, "agent"],
      [9, 9, "others"],
    ]);
    expect(out.not_observed).toBeUndefined();
  });

  it("a person's change between two agent edits stays the person's, even when the agent's next edit was replayed", async () => {
    const start = numbered(1, 6);
    const first = start.replace("line 2\n", "agent 2\n");
    const person = first.replace("line 5\n", "person 5\n");
    // Cursor-style: only the replaced string is known; it is replayed on the last known content.
    const edits: LoggedEdit[] = [
      { at: at(1), path: "a.txt", before: start, after: first },
      { at: at(2), path: "a.txt", replacements: [{ old: "line 6\n", new: "agent 6\n" }] },
    ];
    const end = person.replace("line 6\n", "agent 6\n");
    const file = { path: "a.txt", before: Buffer.from(start), after: Buffer.from(end), count: count(3, 3) };
    const out = await attributeLines([file], { edits, scratchRoot });
    expect(out.files[0]?.ranges.map(([s, e, who]) => [s, e, who])).toEqual([
      [2, 2, "agent"],
      [5, 5, "others"],
      [6, 6, "agent"],
    ]);
  });

  it("a line the agent wrote and a person then rewrote is the person's", async () => {
    const start = "a\n";
    const agent = "a\nagent\n";
    const end = "a\nperson\n";
    const edits: LoggedEdit[] = [{ at: at(1), path: "a.txt", before: start, after: agent }];
    const file = { path: "a.txt", before: Buffer.from(start), after: Buffer.from(end), count: count(1, 0) };
    await attributeLines([file], { edits, scratchRoot });
    expect(file.count).toMatchObject({ agent: 0, others: 1 });
  });

  it("without any hook record every added line is not observed, never someone's", async () => {
    const file = { path: "a.txt", before: Buffer.from("a\n"), after: Buffer.from("a\nb\nc\n"), count: count(2, 0) };
    const out = await attributeLines([file], { edits: null, scratchRoot });
    expect(file.count).toMatchObject({ agent: 0, others: 0, not_observed: 2 });
    expect(out.not_observed).toBe("no hook of the agent observed this task");
    expect(out.files[0]?.ranges.map(([s, e, who]) => [s, e, who])).toEqual([[2, 3, "not_observed"]]);
  });

  it("an edit that cannot be placed makes the file not observed, with the reason", async () => {
    const edits: LoggedEdit[] = [{ at: at(1), path: "a.txt", replacements: [{ old: "missing", new: "x" }] }];
    const file = { path: "a.txt", before: Buffer.from("a\n"), after: Buffer.from("a\nx\n"), count: count(1, 0) };
    const out = await attributeLines([file], { edits, scratchRoot });
    expect(file.count).toMatchObject({ agent: 0, others: 0, not_observed: 1 });
    expect(out.files[0]?.reason).toBe("an edit of the agent could not be placed in the content the file had then");
  });

  it("a new file written by the agent, with its range hashed", async () => {
    const edits: LoggedEdit[] = [{ at: at(1), path: "n.txt", before: null, after: "x\ny\n" }];
    const file = { path: "n.txt", before: null, after: Buffer.from("x\ny\n"), count: { path: "n.txt", added: 2, removed: 0 } };
    const out = await attributeLines([file], { edits, scratchRoot });
    expect(out.files).toEqual([{ path: "n.txt", ranges: [[1, 2, "agent", expect.stringMatching(/^[0-9a-f]{16}$/)]] }]);
  });
});
