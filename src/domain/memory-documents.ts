/**
 * @module domain/memory-documents
 * What a workflow's events become in its account's memory (the full-text index of past work):
 * one document per workflow, task, decision and issue, keyed by the entity's id so a replayed
 * push replaces a document instead of adding a twin. Run by the workflow object on each push;
 * the account object indexes the documents (account/memory).
 */
import type { DecisionView, IssueView, TaskView, WorkflowEvent, WorkflowHeader } from "./view";

export type MemoryKind = "workflow" | "task" | "decision" | "issue";

export interface MemoryDocument {
  /** Id of the entity (wf_…, tk_…, dc_…, is_…). */
  id: string;
  kind: MemoryKind;
  workflow_id: string;
  task_id: string | null;
  /** Weighted higher in ranking: a task's name, a decision's question, an issue's description. */
  title: string;
  body: string;
  /** Where it happened (a decision's task name and areas): ranks lowest, so it helps recall more than order. */
  context: string;
  /** What a result shows: "<question> → <chosen>", "<description> → <resolution>", … */
  text: string;
  at: string;
}

function taskDocument(task: TaskView): MemoryDocument {
  const outcome = task.outcome;
  const body = [
    task.goal,
    task.areas.join(" "),
    outcome?.summary ?? "",
    ...(outcome?.achievements ?? []),
    ...(outcome?.limitations ?? []),
    ...(outcome?.next_steps ?? []),
  ];
  const summary = outcome ? ` (${task.status}): ${outcome.summary}` : `: ${task.goal}`;
  return {
    id: task.id,
    kind: "task",
    workflow_id: "",
    task_id: task.id,
    title: task.name,
    body: body.filter(Boolean).join("\n"),
    context: "",
    text: `${task.name}${summary}`,
    at: task.completed_at ?? task.started_at,
  };
}

function decisionDocument(d: DecisionView, context: string): MemoryDocument {
  return {
    id: d.id,
    kind: "decision",
    workflow_id: "",
    task_id: d.task_id,
    title: d.question,
    body: [d.chosen, d.reasoning, d.trade_offs ?? "", d.options_considered.join(" "), d.category].filter(Boolean).join("\n"),
    context,
    text: `${d.question} → ${d.chosen}`,
    at: d.created_at,
  };
}

function issueDocument(i: IssueView, context: string): MemoryDocument {
  return {
    id: i.id,
    kind: "issue",
    workflow_id: "",
    task_id: i.task_id,
    title: i.description,
    body: [i.resolution, i.type.replaceAll("_", " ")].join("\n"),
    context,
    text: `${i.description} → ${i.resolution}`,
    at: i.created_at,
  };
}

function workflowDocument(w: WorkflowHeader): MemoryDocument {
  const body = [w.description ?? "", ...w.plan.map((p) => p.goal), w.outcome?.summary ?? "", ...(w.outcome?.achievements ?? [])];
  return {
    id: w.id,
    kind: "workflow",
    workflow_id: w.id,
    task_id: null,
    title: w.name,
    body: body.filter(Boolean).join("\n"),
    context: "",
    text: w.outcome ? `${w.name} (${w.status}): ${w.outcome.summary}` : w.name,
    at: w.completed_at ?? w.created_at,
  };
}

/**
 * The documents a batch of events changes. `taskContext` gives a task's name and areas,
 * indexed with its decisions and issues so a new task on the same topic finds them.
 */
export function documentsFromEvents(
  workflowId: string,
  events: readonly WorkflowEvent[],
  taskContext: (taskId: string) => string,
): MemoryDocument[] {
  const byId = new Map<string, MemoryDocument>();
  for (const event of events) {
    let doc: MemoryDocument | null = null;
    if (event.type === "workflow.started" || event.type === "workflow.completed") doc = workflowDocument(event.data as WorkflowHeader);
    else if (event.type === "task.started" || event.type === "task.completed") doc = taskDocument(event.data as TaskView);
    else if (event.type === "decision.logged") {
      const d = event.data as DecisionView;
      doc = decisionDocument(d, taskContext(d.task_id));
    } else if (event.type === "issue.logged") {
      const i = event.data as IssueView;
      doc = issueDocument(i, taskContext(i.task_id));
    }
    // The last state of an entity wins within a batch.
    if (doc) byId.set(doc.id, { ...doc, workflow_id: workflowId });
  }
  return [...byId.values()];
}
