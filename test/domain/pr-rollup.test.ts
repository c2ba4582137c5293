import type { PolicyTask } from "@waymark/protocol/policy";
import { renderRollup, rollup } from "@waymark/protocol/pr-rollup";
import { describe, expect, it } from "vitest";
import { policyTask } from "./fixtures";

/** The per-PR rollup `waymark ci` writes: its figures, and agent text made inert as the PR summary makes it. */
const task = (over: Partial<PolicyTask>): PolicyTask =>
  policyTask("tk_a", {
    name: "Task",
    agent: "codex",
    model: "openai/gpt-5.5",
    cost_usd: 0.5,
    lines: { agent: 6, others: 2, not_observed: 2 },
    file_authors: [],
    ...over,
  });
const SOURCE = { endpoint: "https://waymark.example", commits: 3, recorded_commits: 2 };

describe("the pull request's rollup", () => {
  it("adds the tasks up: lines by author, cost over the priced tasks, tests over the tasks that changed files", () => {
    const r = rollup([
      task({ id: "a" }),
      task({
        id: "b",
        agent: null,
        model: null,
        cost_usd: null,
        tests: "not_observed",
        figures: "claimed",
        lines: { agent: 0, others: 10, not_observed: 0 },
      }),
      task({ id: "c", tests: "no_files", files: [], status: "in_progress", outside_areas: ["x", "y"] }),
    ]);
    expect(r).toMatchObject({
      tasks: 3,
      open_tasks: 1,
      agents: { "codex · openai/gpt-5.5": 2, "agent not named · model not reported": 1 },
      lines: { agent: 12, others: 14, not_observed: 4 },
      agent_share: 40,
      cost_usd: 1,
      unpriced: 1,
      tested: { of: 2, passed: 1 },
      outside_areas: 2,
      unsigned: 1,
    });
  });

  it("renders agent text inert: no heading, link, image, HTML, mention or table break from a task name, a path or a comment", () => {
    const hostile = task({
      name: "# **bold** <img src=x onerror=alert(1)> @everyone [link](javascript:alert(1)) | cell",
      outside_areas: ["docs/a|b`c.md"],
      feedback: [
        {
          id: "fb_aaaaaaaaaaaa",
          target: "task",
          target_id: "tk_a",
          verdict: "comment",
          body: "</details><script>x</script>",
          created_at: "2026-11-27T14:00:00.000Z",
          channel: "pull_request",
          location: { path: "src/x`y.ts", line: 4 },
        },
      ],
    });
    const text = renderRollup([hostile], SOURCE, { file: null });
    expect(text).not.toContain("<img");
    expect(text).not.toContain("<script>");
    expect(text).not.toContain("</details>");
    expect(text).not.toContain("@everyone");
    expect(text).not.toMatch(/[^\\]\[link\]\(/);
    expect(text).toContain("\\*\\*bold\\*\\*");
    expect(text).toContain("``docs/a|b`c.md``");
    expect(text).toContain("- comment on ``src/x`y.ts:4`` (in a pull-request review) in ");
    // Every row of the tasks table has its six cells.
    const row = text.split("\n").find((line) => line.includes("onerror")) ?? "";
    expect(row.replace(/\\\|/g, "").split("|")).toHaveLength(8);
  });

  it("says where the record came from, and when nothing of the range is recorded", () => {
    expect(renderRollup([], SOURCE, { file: null })).toContain("No task of this pull request's commits is in the record.");
    const notes = renderRollup(
      [],
      { ...SOURCE, unreachable: "https://waymark.example: fetch failed" },
      { file: ".waymark/policy.yml", failures: [] },
    );
    expect(notes).toContain(
      "**The endpoint was not reachable (https:⁠//waymark.example: fetch failed): this report is from the repository's notes alone**",
    );
    expect(notes).toContain("**Policy passed** (`.waymark/policy.yml`).");
  });
});
