/**
 * Observed commands next to the agent's claim, at the edge, through a real MCP client: the
 * commands the helper's hooks observed during a task (docs/evidence.md) are stored with the task
 * and shown on the page, in the Markdown summary and in the JSON export as "claimed: … ·
 * observed: `npm test` exit 0 at … after the last edit"; a client's own list proves nothing; the
 * bounds refuse a call with an error naming the field.
 */
import Ajv2020 from "ajv/dist/2020";
import { describe, expect, it } from "vitest";
import schema from "../../docs/schemas/export-v1.json";
import { LIMITS } from "../../src/limits";
import { callTool as call, connect, ok } from "../support/mcp-client";
import { visibleText as visible } from "../support/page-text";
import { workerFetch, workerTarget } from "../support/worker";

type Client = Awaited<ReturnType<typeof connect>>;
const HEAD = "c".repeat(40);
const BLOB = "a".repeat(40);
const T0 = Date.parse("2026-11-27T14:00:00.000Z");
const at = (seconds: number) => T0 + seconds * 1000;

async function openTask(client: Client, name: string) {
  const wf = await ok<{ workflow_id: string; share_url: string }>(client, "start_workflow", { name, force_new: true });
  const snapshot = { type: "git", head: HEAD, branch: "main", dirty: [] };
  const task = await ok<{ task_id: string }>(client, "start_task", {
    workflow_id: wf.workflow_id,
    name: "Fix the parser",
    goal: "g",
    snapshot,
  });
  return { ...wf, task_id: task.task_id };
}

type Run = { command: string; at: number; exit_code: number | null; duration_ms: number | null; kinds: string[]; truncated?: true };
const run = (command: string, seconds: number, exit_code: number | null, kinds: string[] = []): Run => ({
  command,
  at: at(seconds),
  exit_code,
  duration_ms: 1500,
  kinds,
});

const changes = (commands: unknown, helper = true) => ({
  type: "git",
  start_head: HEAD,
  head: HEAD,
  committed: [],
  dirty: [{ path: "src/parser.ts", head: null, worktree: { mode: "100644", blob: BLOB } }],
  ...(helper ? { source: { kind: "helper", version: "0.1.0" } } : {}),
  commands,
});

async function complete(client: Client, task_id: string, extra: Record<string, unknown>) {
  return call(client, "complete_task", { task_id, status: "success", outcome: { summary: "Parser fixed." }, ...extra });
}

const text = async (url: string) => (await workerFetch(url)).text();

describe("observed commands next to the agent's claim", () => {
  it("the last test run after the last edit, on the page, in the summary and in the export; every run in order", async () => {
    const client = await connect(workerTarget());
    const { task_id, share_url } = await openTask(client, "Evidence");
    const done = await complete(client, task_id, {
      metadata: { tests_status: "passed", commands_executed: ["npm test"] },
      // Sent out of order: the record keeps them in time order.
      changes: changes({
        runs: [
          run("npm test", 120, 0, ["test"]),
          run("npm test", 30, 1, ["test"]),
          run("npx tsc --noEmit", 60, 2, ["typecheck"]),
          run("git status", 125, 0),
        ],
        last_edit_at: at(90),
      }),
    });
    expect(done.isError, done.text).toBe(false);

    const { task } = await ok<{ task: { commands: { runs: Run[]; omitted: number; last_edit_at: string } } }>(client, "get_workflow", {
      task_id,
    });
    expect(task.commands.runs.map((r) => `${r.command} ${r.exit_code}`)).toEqual([
      "npm test 1",
      "npx tsc --noEmit 2",
      "npm test 0",
      "git status 0",
    ]);
    expect(task.commands).toMatchObject({ omitted: 0, last_edit_at: "2026-11-27T14:01:30.000Z" });

    const page = await text(share_url);
    const shown = visible(page);
    expect(shown).toContain("Tests: claimed: tests passed (ran npm test) · observed: npm test ✓ exit 0 (passed) at");
    expect(shown).toMatch(/observed: npm test ✓ exit 0 \(passed\) at [^·]*14:02[^·]* after the last edit/);
    // The type-check ran only before the last edit, and failed: said in words and with a shape, in red.
    expect(shown).toContain(
      "Type-check: no claim · no type-check observed after the last edit (last before it: npx tsc --noEmit ✕ exit 2 (failed) at",
    );
    expect(page).toMatch(/<span class="exit exit-fail"><span aria-hidden="true">✕<\/span> exit 2 \(failed\)<\/span>/);
    // Both test runs, in order.
    expect(shown).toMatch(/npm test ✕ exit 1 \(failed\) · [^·]*14:00:30|npm test ✕ exit 1 \(failed\) · [^·]*14:00/);
    expect(shown.indexOf("npm test ✕ exit 1")).toBeLessThan(shown.indexOf("npm test ✓ exit 0 (passed) · "));

    const markdown = await text(`${share_url}/export.md`);
    expect(markdown).toContain(
      "Checks:\n- Tests: claimed: tests passed (ran `npm test`) · observed: `npm test` ✓ exit 0 (passed) at 14:02 UTC after the last edit",
    );
    expect(markdown).toContain(
      "- Type-check: no claim · no type-check observed after the last edit (last before it: `npx tsc --noEmit` **✕ exit 2 (failed)** at 14:01 UTC)",
    );

    const exported = await (await workerFetch(`${share_url}/export.json`)).json();
    const validate = new Ajv2020({ allErrors: true, strict: false }).compile(schema);
    expect(validate(exported), JSON.stringify(validate.errors)).toBe(true);
    const [exportedTask] = (exported as { tasks: { commands: unknown }[] }).tasks;
    expect(exportedTask?.commands).toEqual(task.commands);
  });

  it("a failing last test run is red and says so; a claim with no test run after the last edit says that", async () => {
    const client = await connect(workerTarget());
    const failing = await openTask(client, "Failing");
    await complete(client, failing.task_id, {
      metadata: { tests_status: "passed" },
      changes: changes({ runs: [run("pytest -q", 100, 1, ["test"])], last_edit_at: at(90) }),
    });
    const page = await text(failing.share_url);
    expect(visible(page)).toContain("Tests: claimed: tests passed · observed: pytest -q ✕ exit 1 (failed) at");
    expect(page).toContain('<span class="exit exit-fail"><span aria-hidden="true">✕</span> exit 1 (failed)</span>');
    expect(await text(`${failing.share_url}/export.md`)).toContain(
      "- Tests: claimed: tests passed · observed: `pytest -q` **✕ exit 1 (failed)** at 14:01 UTC after the last edit",
    );

    const stale = await openTask(client, "Stale");
    await complete(client, stale.task_id, {
      metadata: { tests_status: "passed" },
      changes: changes({ runs: [run("npm test", 30, 0, ["test"]), run("ls", 200, 0)], last_edit_at: at(90) }),
    });
    expect(visible(await text(stale.share_url))).toContain(
      "Tests: claimed: tests passed · no test run observed after the last edit (last before it: npm test ✓ exit 0 (passed) at",
    );
    expect(await text(`${stale.share_url}/export.md`)).toContain(
      "- Tests: claimed: tests passed · no test run observed after the last edit (last before it: `npm test` ✓ exit 0 (passed) at 14:00 UTC)",
    );
  });

  it("commands a client lists itself prove nothing: the claim is shown as not observed", async () => {
    const client = await connect(workerTarget());
    const { task_id, share_url } = await openTask(client, "Client claims");
    const done = await complete(client, task_id, {
      metadata: { tests_status: "passed" },
      changes: changes({ runs: [run("npm test", 100, 0, ["test"])], last_edit_at: null }, false),
    });
    expect(done.isError, done.text).toBe(false);
    const { task } = await ok<{ task: Record<string, unknown> }>(client, "get_workflow", { task_id });
    expect(task.commands).toBeUndefined();
    const shown = visible(await text(share_url));
    expect(shown).toContain("Tests: claimed: tests passed · not observed (no Waymark hook recorded this task's commands)");
    expect(shown).not.toContain("observed: npm test");
    expect(await text(`${share_url}/export.md`)).toContain(
      "- Tests: claimed: tests passed · not observed (no Waymark hook recorded this task's commands)",
    );
  });

  it.each([
    [
      "a command line over the byte bound",
      { runs: [run("é".repeat(LIMITS.COMMAND_BYTES / 2 + 1), 1, 0)], last_edit_at: null },
      `INPUT_VALIDATION_ERROR: changes.commands.runs[0].command: must be at most ${LIMITS.COMMAND_BYTES} bytes of UTF-8`,
    ],
    [
      "more commands than a task records",
      { runs: Array.from({ length: LIMITS.COMMANDS_PER_TASK + 1 }, (_, i) => run("ls", i, 0)), last_edit_at: null },
      `PAYLOAD_TOO_LARGE: changes.commands.runs: must have at most ${LIMITS.COMMANDS_PER_TASK} items`,
    ],
    [
      "a duration past a week",
      { runs: [{ ...run("sleep 1", 1, 0), duration_ms: LIMITS.COMMAND_DURATION_MS + 1 }], last_edit_at: null },
      `INPUT_VALIDATION_ERROR: changes.commands.runs[0].duration_ms: must be ≤ ${LIMITS.COMMAND_DURATION_MS}`,
    ],
    [
      "a kind that does not exist",
      { runs: [run("npm test", 1, 0, ["deploy"])], last_edit_at: null },
      "INPUT_VALIDATION_ERROR: changes.commands.runs[0].kinds[0]: must be one of",
    ],
    [
      "a kind repeated",
      { runs: [run("npm test", 1, 0, ["test", "test"])], last_edit_at: null },
      "INPUT_VALIDATION_ERROR: changes.commands.runs[0].kinds: must not repeat a kind",
    ],
    [
      "an exit code that is not a whole number",
      { runs: [run("npm test", 1, 0.5)], last_edit_at: null },
      "INPUT_VALIDATION_ERROR: changes.commands.runs[0].exit_code:",
    ],
    [
      "output smuggled in a field",
      { runs: [{ ...run("npm test", 1, 0), stdout: "all green" }], last_edit_at: null },
      "INPUT_VALIDATION_ERROR: changes.commands.runs[0]: unknown field(s): stdout",
    ],
  ])("%s is refused, naming the field", async (_label, commands, message) => {
    const client = await connect(workerTarget());
    const { task_id } = await openTask(client, "Bounds");
    const refused = await complete(client, task_id, { changes: changes(commands) });
    expect(refused.isError).toBe(true);
    expect(refused.text).toContain(message);
    // Nothing was half-written: the task is still open and completes afterwards.
    const done = await complete(client, task_id, { changes: changes({ runs: [], last_edit_at: null }) });
    expect(done.isError, done.text).toBe(false);
  });
});
