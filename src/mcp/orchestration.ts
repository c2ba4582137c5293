/**
 * @module orchestration — the tool steps that span two Durable Objects, kept in one place:
 * start_workflow consults the account's index (resume by name, within one repository) before creating the workflow
 * and, when the account's settings say new workflows are shared (the default), its share link; start_task asks the account's memory for related earlier work once the
 * task exists. Everything else a tool does is one call to one object.
 */
import type { StartTaskInput, StartWorkflowInput } from "@waymark/protocol/tools";
import type { ResumeCandidate } from "../account/account-object";
import type { RelatedItem } from "../account/memory";
import { fail, ok, type Result } from "../errors";
import { newWorkflowId, workflowIdForKey } from "../ids";
import type { FeedbackDigest } from "../workflow/feedback";
import type { KeptState, StartTaskOutput, StartWorkflowOutput } from "../workflow/workflow-object";
import type { WithFeedback } from "../workflow/writer";
import { accountStub, notFound, type ToolContext, workflowStub } from "./context";
import { RESUME_RECENT } from "./resume-text";
import { takeFeedback } from "./reviewer-feedback";

export interface StartedWorkflow extends StartWorkflowOutput {
  share_url?: string;
  /** Set when an open workflow of the same name was returned instead of a new one. */
  resumed?: true;
  resume_candidate?: ResumeCandidate;
}

export interface StartedTask extends StartTaskOutput, KeptState {
  related?: RelatedItem[];
}

/** Resume by name unless `force_new`; otherwise create the workflow and, if the owner shares new workflows, its read-only link. */
export async function startWorkflow(ctx: ToolContext, input: StartWorkflowInput): Promise<Result<StartedWorkflow>> {
  const id = input.idempotency_key ? await workflowIdForKey(ctx.account, input.idempotency_key) : newWorkflowId();
  // Repository identity: only a workflow of the same repository (or, without one, another without one) is resumed.
  const prepared = await accountStub(ctx).prepareWorkflow({
    name: input.name,
    fingerprint: input.repository?.fingerprint ?? null,
    origin: ctx.origin,
    resume: !input.force_new,
  });
  const candidate = prepared.candidate;
  // A retry of the call that created `candidate` (same idempotency key) replays below instead.
  if (candidate && candidate.workflow_id !== id) {
    const resumed: StartedWorkflow = {
      workflow_id: candidate.workflow_id,
      created_at: candidate.created_at,
      resumed: true,
      resume_candidate: candidate,
    };
    // Nothing was written, so no write brought the workflow's feedback along: ask for it.
    const feedback = await takeFeedback(ctx, candidate.workflow_id);
    return ok(feedback ? withFeedback(resumed, feedback) : resumed);
  }
  const stub = workflowStub(ctx, id);
  if (!stub) return fail("INTERNAL", "could not allocate a workflow id");
  const shared = prepared.settings.share_new_workflows;
  const started = await stub.startWorkflow(ctx.account, id, input, { usage: prepared.usage, share: shared });
  if (!started.ok) return started;
  const { share_token: created, ...value } = started.value;
  if (!shared) return ok(value);
  // A replayed start (same idempotency key) created nothing: its link is asked for, as the owner may have changed it.
  let token = created ?? null;
  if (token === null) {
    const share = await stub.shareLink(ctx.account);
    token = share.ok ? share.value.token : null;
  }
  return ok(token ? { ...value, share_url: `${ctx.origin}/s/${token}` } : value);
}

/** A result carrying reviewer feedback the way a write's result does (defineTool answers it). */
function withFeedback<T extends object>(value: T, reviewer_feedback: FeedbackDigest): WithFeedback<T> {
  return { ...value, reviewer_feedback };
}

/**
 * Start the task and attach the account's most relevant earlier decisions and issues. The
 * lookup does not depend on the new task (it has logged nothing yet), so both objects are asked
 * at once: the reply waits for the slower of the two, not their sum.
 */
export async function startTask(ctx: ToolContext, input: StartTaskInput): Promise<Result<StartedTask>> {
  const stub = workflowStub(ctx, input.workflow_id);
  if (!stub) return notFound("workflow_id", input.workflow_id);
  // The helper (its data attached) keeps the workflow's state for its hooks: it comes back with the write.
  const keepsState = input.snapshot === undefined ? undefined : RESUME_RECENT;
  const [started, found] = await Promise.all([stub.startTask(ctx.account, input, ctx.credential, keepsState), relatedWork(ctx, input)]);
  if (!started.ok) return started;
  // A replayed start (same idempotency key) names a task that may have logged since: never its own entries.
  const related = found.filter((item) => item.task_id !== started.value.task_id);
  return ok(related.length > 0 ? { ...started.value, related } : started.value);
}

/** Best effort: the task is started either way, so a failing memory costs only the suggestions. */
async function relatedWork(ctx: ToolContext, input: StartTaskInput): Promise<RelatedItem[]> {
  try {
    return await accountStub(ctx).related({
      workflow_id: input.workflow_id,
      task_id: "",
      name: input.name,
      goal: input.goal,
      areas: input.areas ?? [],
    });
  } catch (error) {
    console.error("related work lookup failed", error);
    return [];
  }
}
