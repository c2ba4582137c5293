import { describe, expect, it } from "vitest";
import { newWorkflowId } from "../../src/ids";
import type { WithFeedback } from "../../src/workflow/writer";
import { ON_PAGE } from "../support/worker";
import { stubFor, value } from "./rpc";

/** The RPC methods keep their declared result types; the feedback rides along as an extra field. */
const carried = (result: object) => (result as WithFeedback<object>).reviewer_feedback;

// A write's own result brings the reviewer feedback the agent has not seen (taken in the write's
// transaction), so a tool call is one call to the workflow object; the owner's feedback is never
// "delivered" by the owner's own write.

const ACCOUNT = "acme";

describe("reviewer feedback in a write's result", () => {
  it("comes once with the agent's next write, not with the owner's own feedback writes", async () => {
    const id = newWorkflowId();
    const stub = stubFor(id);
    value(await stub.startWorkflow(ACCOUNT, id, { name: "Carried" }));
    const task = value(await stub.startTask(ACCOUNT, { workflow_id: id, name: "T", goal: "g" }));
    const first = value(
      await stub.addFeedback(ACCOUNT, { target: "workflow", target_id: id, verdict: "comment", body: "one", ...ON_PAGE }),
    );
    const second = value(
      await stub.addFeedback(ACCOUNT, { target: "task", target_id: task.task_id, verdict: "approved", body: "two", ...ON_PAGE }),
    );
    expect(first).not.toHaveProperty("reviewer_feedback");
    expect(second).not.toHaveProperty("reviewer_feedback");

    const logged = value(await stub.logMilestone(ACCOUNT, { task_id: task.task_id, message: "m" }));
    expect(carried(logged)?.items.map((i) => i.body)).toEqual(["one", "two"]);
    expect(carried(logged)?.more).toBe(0);
    // Delivered: neither the next write nor a lookup brings it again.
    expect(value(await stub.logMilestone(ACCOUNT, { task_id: task.task_id, message: "n" }))).not.toHaveProperty("reviewer_feedback");
    expect(await stub.takeFeedback(ACCOUNT)).toBeNull();
  });

  it("a refused write delivers nothing; an idempotent replay brings what is pending then", async () => {
    const id = newWorkflowId();
    const stub = stubFor(id);
    value(await stub.startWorkflow(ACCOUNT, id, { name: "Refused" }));
    const task = value(await stub.startTask(ACCOUNT, { workflow_id: id, name: "T", goal: "g", idempotency_key: "start-t" }));
    value(await stub.addFeedback(ACCOUNT, { target: "workflow", target_id: id, verdict: "comment", body: "kept", ...ON_PAGE }));
    const refused = await stub.logMilestone("globex", { task_id: task.task_id, message: "not theirs" });
    expect(refused.ok).toBe(false);
    const replay = value(await stub.startTask(ACCOUNT, { workflow_id: id, name: "T", goal: "g", idempotency_key: "start-t" }));
    expect(replay.task_id).toBe(task.task_id);
    expect(carried(replay)?.items.map((i) => i.body)).toEqual(["kept"]);
  });
});
