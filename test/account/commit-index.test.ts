import { describe, expect, it } from "vitest";
import { commitsFromEvents } from "../../src/domain/commit-entries";
import type { WorkflowEvent } from "../../src/domain/view";
import { connect, ok } from "../support/mcp-client";
import { accountIndexed, ORIGIN, TOKENS, workerFetch, workerTarget } from "../support/worker";

/**
 * Which task made a commit, as `waymark ci` asks it about a pull request's range: the account's
 * commit index, fed by the workflow outbox from each completed task's recorded commits.
 */
const api = async (path: string, token: string = TOKENS.globex) => {
  const response = await workerFetch(`${ORIGIN}${path}`, { headers: { Authorization: `Bearer ${token}` } });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
};
const file = (c: string) => ({ mode: "100644", blob: c.repeat(40) });
const sha = (c: string) => c.repeat(40);

describe("searching tasks by commit", () => {
  it("finds the task that made each commit, for one account only", async () => {
    const client = await connect(workerTarget(TOKENS.globex));
    const wf = await ok<{ workflow_id: string }>(client, "start_workflow", { name: "Commit index", force_new: true });
    const task = await ok<{ task_id: string }>(client, "start_task", { workflow_id: wf.workflow_id, name: "Two commits", goal: "g" });
    await ok(client, "complete_task", {
      task_id: task.task_id,
      status: "success",
      outcome: { summary: "done" },
      changes: {
        type: "checksum",
        transitions: [{ path: "src/a.ts", before: null, after: file("a") }],
        review: {
          lines: [],
          // As the helper records them: abbreviated (git's %h).
          commits: [
            { sha: sha("a").slice(0, 7), subject: "first" },
            { sha: sha("b").slice(0, 12), subject: "second" },
          ],
          branch: "feature",
        },
      },
    });
    await accountIndexed(wf.workflow_id);
    const { status, body } = await api(`/api/commits?sha=${sha("b")},${sha("c")},${sha("a")}`);
    expect(status).toBe(200);
    expect(body.commits).toBe(3);
    expect((body.results as { commit: string }[]).map((hit) => hit.commit).sort()).toEqual([sha("a"), sha("b")]);
    expect(body.results).toContainEqual(
      expect.objectContaining({
        commit: sha("a"),
        sha: "aaaaaaa",
        workflow_id: wf.workflow_id,
        task_id: task.task_id,
        task_name: "Two commits",
      }),
    );
    expect((await api(`/api/commits?sha=${sha("a")}`, TOKENS.acme)).body.results).toEqual([]);
  });

  it.each([
    ["no commit", "/api/commits", "sha: is required: must be full commit ids"],
    ["an abbreviated id", `/api/commits?sha=${"a".repeat(12)}`, "sha: must be full commit ids"],
    ["upper case", `/api/commits?sha=${sha("A")}`, "sha: must be full commit ids"],
    ["an empty entry", `/api/commits?sha=${sha("a")},`, "sha: must be full commit ids"],
    ["251 commits", `/api/commits?sha=${Array.from({ length: 251 }, () => sha("a")).join(",")}`, "sha: must be full commit ids"],
    ["an unknown parameter", `/api/commits?sha=${sha("a")}&x=1`, "x: unknown field"],
  ])("refuses %s", async (_, path, message) => {
    const { status, body } = await api(path);
    expect(status).toBe(400);
    expect(body.code).toBe("INPUT_VALIDATION_ERROR");
    expect(String(body.message)).toContain(message);
  });

  it("indexes the commits a completed task made (abbreviated, as recorded) and its end commit when it moved", () => {
    const event = (data: Record<string, unknown>) =>
      ({
        seq: 1,
        at: "2026-01-01T00:00:00.000Z",
        type: "task.completed",
        task_id: "tk_a",
        data: { id: "tk_a", name: "T", ...data },
      }) as unknown as WorkflowEvent;
    const made = event({
      files_changed: {
        commits: [
          { sha: sha("1"), subject: "s" },
          { sha: "1234567", subject: "short" },
          { sha: "123456", subject: "too short" },
        ],
      },
      repository: { start_commit: sha("0"), end_commit: sha("2") },
    });
    expect(commitsFromEvents([made]).map((entry) => entry.sha)).toEqual([sha("1"), "1234567", sha("2")]);
    const still = event({ files_changed: { commits: [] }, repository: { start_commit: sha("0"), end_commit: sha("0") } });
    expect(commitsFromEvents([still])).toEqual([]);
    expect(commitsFromEvents([{ ...made, type: "task.started" }])).toEqual([]);
  });
});
