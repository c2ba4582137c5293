import { checkLines, type EvidenceRun, type EvidenceTask } from "@waymark/protocol/check-evidence";
import { checkLabel, checkWording, type EvidenceSegment } from "@waymark/protocol/provenance-wording";
import { describe, expect, it } from "vitest";

const EDIT = "2026-11-27T14:00:00.000Z";
const run = (command: string, at: string, exit_code: number | null, kinds: EvidenceRun["kinds"]): EvidenceRun => ({
  command,
  at,
  exit_code,
  duration_ms: null,
  kinds,
});
/** A check's sentence as plain text: commands in backticks, times as written, exit codes in words. */
const words = (segments: EvidenceSegment[]) =>
  segments
    .map((s) =>
      typeof s === "string"
        ? s
        : "code" in s
          ? `\`${s.code}\``
          : "time" in s
            ? s.time.slice(11, 16)
            : s.exit === null
              ? "exit ?"
              : `exit ${s.exit}`,
    )
    .join("");
const sentences = (task: EvidenceTask) => checkLines(task).map((line) => `${checkLabel(line)}: ${words(checkWording(line))}`);

describe("checks: the agent's claim next to what the hooks observed", () => {
  it.each<[string, EvidenceTask, string[]]>([
    ["nothing claimed, nothing observed: no line at all", { metadata: null }, []],
    [
      "a claim no hook could check: not observed, never 'no test run'",
      { metadata: { tests_status: "passed" } },
      ["Tests: claimed: tests passed · not observed (no Waymark hook recorded this task's commands)"],
    ],
    [
      "commands observed, none a test: the test line says so even without a claim",
      { metadata: null, commands: { runs: [run("ls", "2026-11-27T14:01:00.000Z", 0, [])], omitted: 0, last_edit_at: EDIT } },
      ["Tests: no claim · no test run observed after the last edit"],
    ],
    [
      "a run at the very time of the last edit counts as after it",
      { metadata: { tests_status: "passed" }, commands: { runs: [run("npm test", EDIT, 0, ["test"])], omitted: 0, last_edit_at: EDIT } },
      ["Tests: claimed: tests passed · observed: `npm test` exit 0 at 14:00 after the last edit"],
    ],
    [
      "no edit recorded: every run counts, and the sentence does not mention an edit",
      {
        metadata: { tests_status: "failed" },
        commands: { runs: [run("pytest", "2026-11-27T13:00:00.000Z", null, ["test"])], omitted: 0, last_edit_at: null },
      },
      ["Tests: claimed: tests failed · observed: `pytest` exit ? at 13:00"],
    ],
    [
      "the last run of a kind wins; other kinds get their own line; a claim of another kind from commands_executed",
      {
        metadata: { commands_executed: ["npm run lint", "npm test"] },
        commands: {
          runs: [
            run("npm test", "2026-11-27T14:01:00.000Z", 1, ["test"]),
            run("npm run build && npm test", "2026-11-27T14:02:00.000Z", 0, ["build", "test"]),
          ],
          omitted: 3,
          last_edit_at: EDIT,
        },
      },
      [
        "Tests: claimed: ran `npm test` · observed: `npm run build && npm test` exit 0 at 14:02 after the last edit (3 more commands observed than recorded)",
        "Build: no claim · observed: `npm run build && npm test` exit 0 at 14:02 after the last edit (3 more commands observed than recorded)",
        "Lint: claimed: ran `npm run lint` · no lint run observed after the last edit (3 more commands observed than recorded)",
      ],
    ],
  ])("%s", (_case, task, expected) => {
    expect(sentences(task)).toEqual(expected);
  });

  it("every run of a kind is kept in order, and the one before the last edit is named when none came after", () => {
    const runs = [run("npm test", "2026-11-27T13:50:00.000Z", 1, ["test"]), run("npm test", "2026-11-27T13:55:00.000Z", 0, ["test"])];
    const lines = checkLines({ metadata: { tests_status: "passed" }, commands: { runs, omitted: 0, last_edit_at: EDIT } });
    expect(lines.map((line) => line.observation?.runs)).toEqual([runs]);
    expect(lines.map((line) => words(checkWording(line)))).toEqual([
      "claimed: tests passed · no test run observed after the last edit (last before it: `npm test` exit 0 at 13:55)",
    ]);
  });
});
