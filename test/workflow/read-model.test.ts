/**
 * The paged reads as the workflow object answers them over RPC (what the pages, the exports and
 * the resources are made of), parsed strictly through their schemas (@waymark/protocol/views/reads):
 * the owner's head (with the share link and the feedback), a share link's reader's head, and
 * timeline pages that list only each task's first files. test/e2e/read-model.test.ts parses what
 * the Worker serves from them.
 */
import { taskPageSchema, workflowHeadSchema } from "@waymark/protocol/views/reads";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { newWorkflowId } from "../../src/ids";
import { file } from "../domain/fixtures";
import { ON_PAGE } from "../support/worker";
import { stubFor, value } from "./rpc";

const ACME = "acme";

function parsed<T>(schema: z.ZodType<T>, input: unknown, where: string): T {
  const result = schema.safeParse(input);
  if (!result.success) throw new Error(`${where} does not match its view:\n${z.prettifyError(result.error)}`);
  return result.data;
}

describe("the paged reads", () => {
  it("head and timeline pages, for the owner and a share link's reader", async () => {
    const id = newWorkflowId();
    const stub = stubFor(id);
    value(await stub.startWorkflow(ACME, id, { name: "Paged", plan: [{ step: "1", goal: "Do it" }] }));
    const snapshot = { type: "checksum" as const, files: 3, digest: "d".repeat(64) };
    const parent = value(await stub.startTask(ACME, { workflow_id: id, name: "Parent", goal: "g", snapshot })).task_id;
    const child = value(
      await stub.startTask(ACME, { workflow_id: id, parent_task_id: parent, name: "Child", goal: "g", snapshot }),
    ).task_id;
    const transitions = ["a.ts", "b.ts", "c.ts"].map((path) => ({ path, before: null, after: file(path) }));
    value(
      await stub.completeTask(ACME, {
        task_id: child,
        status: "success",
        outcome: { summary: "Child done", manual_review_needed: true },
        changes: { type: "checksum", transitions },
      }),
    );
    value(
      await stub.logIssue(ACME, { task_id: parent, type: "other", description: "odd", resolution: "fixed", requires_human_review: true }),
    );
    value(await stub.logDecision(ACME, { task_id: parent, category: "other", question: "Which?", chosen: "this", reasoning: "because" }));
    value(await stub.logMilestone(ACME, { task_id: parent, message: "half", progress: 50 }));
    value(
      await stub.completeTask(ACME, {
        task_id: parent,
        status: "success",
        outcome: { summary: "Done" },
        changes: { type: "checksum", transitions },
      }),
    );
    const token = value(await stub.manageShare(ACME, "rotate", null)).token as string;
    value(await stub.addFeedback(ACME, { target: "task", target_id: child, verdict: "approved", body: "Fine", ...ON_PAGE }));

    const owner = parsed(workflowHeadSchema, value(await stub.readHead(ACME, true)), "the owner's head");
    expect(owner.share?.status).toBe("active");
    expect(owner.feedback).toHaveLength(1);
    expect(owner.review_items).toEqual({ tasks: 1, issues: 1 });
    const shared = parsed(workflowHeadSchema, value(await stub.readHead({ share_token: token }, false)), "a share link's head");
    expect(shared.share).toBeUndefined();

    const first = parsed(taskPageSchema, value(await stub.readTasks(ACME, null, 1, 1)), "the first timeline page");
    expect(first.entries[0]).toMatchObject({ depth: 0, subtasks: 1, files_unlisted: 2 });
    expect(first.entries[0]?.decisions).toHaveLength(1);
    expect(first.next_cursor).not.toBeNull();
    const last = parsed(
      taskPageSchema,
      value(await stub.readTasks({ share_token: token }, first.next_cursor, 5)),
      "the last timeline page",
    );
    expect(last.entries.map((entry) => entry.depth)).toEqual([1]);
    expect(last.next_cursor).toBeNull();
  });
});
