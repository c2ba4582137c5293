/**
 * The hooks' record of the agent's edits (src/lines/edit-log.ts), written as the edit hook's spool
 * is read and read back at complete_task: contents in the record itself, no file per edit; a
 * content before an edit that repeats the last one recorded is named by its hash, and a reader
 * takes the path's previous version only when it hashes so (an edit not followed, never a wrong
 * version); records of earlier helpers (contents in blobs/) are still read, a blob cut short is gone;
 * a drained spool's edits are written once at the end of its batch (sooner past 1 MiB of lines).
 */
import { createHash } from "node:crypto";
import { appendFileSync, existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, expect, it } from "vitest";
import { agentNamed } from "../src/agents/registry.js";
import { Journal } from "../src/hooks/journal.js";
import { LineEditLog } from "../src/lines/edit-log.js";
import { cleanupTempDirs, tempDir } from "./fixtures.js";

afterAll(cleanupTempDirs);

const TASK = "tk_edit_log";
const CLAUDE = agentNamed("claude") as NonNullable<ReturnType<typeof agentNamed>>;

async function openJournal(): Promise<{ journal: Journal; repo: string }> {
  const repo = tempDir("edit-log-repo-");
  const journal = new Journal(repo, tempDir("edit-log-cache-"));
  await journal.taskStarted({ task_id: TASK, workflow_id: null, name: null, started_at: 1 });
  return { journal, repo };
}

/** Claude Code's PostToolUse payload of an Edit of `path`, whose content was `before`, that replaced `old` with `replaced`. */
function edit(repo: string, path: string, before: string, old: string, replaced: string) {
  return {
    tool_name: "Edit",
    tool_input: { file_path: join(repo, path), old_string: old, new_string: replaced },
    tool_response: { filePath: join(repo, path), oldString: old, newString: replaced, originalFile: before },
  };
}

const sha = (text: string) => createHash("sha256").update(text).digest("hex");

it("keeps each content in the record itself, the repeated one by its hash, and replays the same versions", async () => {
  const { journal, repo } = await openJournal();
  const log = new LineEditLog(journal);
  await log.record(edit(repo, "a.txt", "one\n", "one", "ONE"), CLAUDE, 10, repo);
  await log.record(edit(repo, "a.txt", "ONE\n", "ONE\n", "ONE\ntwo\n"), CLAUDE, 20, repo);
  // No file per edit or per content: the task's record only.
  expect(readdirSync(log.folder)).toEqual([Journal.taskFileName(TASK, "jsonl")]);
  const lines = readFileSync(join(log.folder, Journal.taskFileName(TASK, "jsonl")), "utf8")
    .trim()
    .split("\n");
  expect(lines.map((line) => JSON.parse(line))).toEqual([
    { at: 10, path: "a.txt", before_text: "one\n", after_text: "ONE\n" },
    { at: 20, path: "a.txt", before_sha: sha("ONE\n"), after_text: "ONE\ntwo\n" },
  ]);
  expect(await log.edits(TASK)).toEqual([
    { at: 10, path: "a.txt", before: "one\n", after: "ONE\n" },
    { at: 20, path: "a.txt", before: "ONE\n", after: "ONE\ntwo\n" },
  ]);
});

it("writes a batch's edits once at its end (a file's waiting lines past 1 MiB sooner) and replays them in order", async () => {
  const { journal, repo } = await openJournal();
  const log = new LineEditLog(journal);
  const file = join(log.folder, Journal.taskFileName(TASK, "jsonl"));
  const written = () => readFileSync(file, "utf8").trim().split("\n").length;
  journal.startBatch();
  await log.record(edit(repo, "a.txt", "one\n", "one", "ONE"), CLAUDE, 10, repo);
  await log.record(edit(repo, "a.txt", "ONE\n", "ONE", "ONE!"), CLAUDE, 20, repo);
  expect(existsSync(file)).toBe(false);
  // Below the capture bound of one content (1 MiB), the two of them past the batch's.
  const big = `${"x".repeat(600 * 1024)}\n`;
  await log.record(edit(repo, "b.txt", big, "x", "y"), CLAUDE, 30, repo);
  // Past the bound: written with the lines that waited before it.
  expect(written()).toBe(3);
  await log.record(edit(repo, "a.txt", "ONE!\n", "ONE!", "ONE?"), CLAUDE, 40, repo);
  expect(written()).toBe(3);
  await journal.endBatch();
  expect(written()).toBe(4);
  expect(await log.edits(TASK)).toEqual([
    { at: 10, path: "a.txt", before: "one\n", after: "ONE\n" },
    { at: 20, path: "a.txt", before: "ONE\n", after: "ONE!\n" },
    { at: 30, path: "b.txt", before: big, after: big.replace("x", "y") },
    { at: 40, path: "a.txt", before: "ONE!\n", after: "ONE?\n" },
  ]);
});

it("takes a content named by its hash only from a previous version that hashes so", async () => {
  const { journal, repo } = await openJournal();
  const log = new LineEditLog(journal);
  await log.record(edit(repo, "a.txt", "one\n", "one", "ONE"), CLAUDE, 10, repo);
  await log.record(edit(repo, "a.txt", "ONE\n", "ONE", "ONE!"), CLAUDE, 30, repo);
  // Another process recorded an edit of the same file in between (a record read from the spool late).
  appendFileSync(
    join(log.folder, Journal.taskFileName(TASK, "jsonl")),
    `${JSON.stringify({ at: 20, path: "a.txt", before_text: "ONE\n", after_text: "other\n" })}\n`,
  );
  const edits = await log.edits(TASK);
  expect(edits?.map((e) => [e.at, e.before, e.after, e.skipped])).toEqual([
    [10, "one\n", "ONE\n", undefined],
    [20, "ONE\n", "other\n", undefined],
    // Its content before is not the version before it in the record: not followed, never taken for "other\n".
    [30, undefined, "ONE!\n", "the record of a content the agent wrote is gone"],
  ]);
});

it("reads the records of earlier helpers, whose contents are in blobs/; a content cut short is gone", async () => {
  const { journal } = await openJournal();
  const log = new LineEditLog(journal);
  mkdirSync(join(log.folder, "blobs"), { recursive: true });
  writeFileSync(join(log.folder, "blobs", sha("one\n")), "one\n");
  writeFileSync(join(log.folder, "blobs", sha("ONE\n")), "ON");
  writeFileSync(
    join(log.folder, Journal.taskFileName(TASK, "jsonl")),
    `${JSON.stringify({ at: 10, path: "a.txt", before: sha("one\n"), after: null })}\n${JSON.stringify({ at: 20, path: "b.txt", before: null, after: sha("ONE\n") })}\n`,
  );
  expect(await log.edits(TASK)).toEqual([
    { at: 10, path: "a.txt", before: "one\n", after: null },
    { at: 20, path: "b.txt", before: null, skipped: "the record of a content the agent wrote is gone" },
  ]);
  await log.forget(TASK);
  expect(readdirSync(log.folder)).toEqual([]);
});
