/**
 * Reading a workflow back the way a follower of its share link does (the JSON export and the
 * live feed's catch-up), and the invariants every workflow must satisfy after any run, crash or
 * not. Shared by the benches and the end-to-end tests.
 */
import type { Acked } from "./agents.ts";

export interface EventLite {
  seq: number;
  type: string;
  task_id: string | null;
  data: Record<string, unknown>;
}

interface TaskLite {
  id: string;
  status: string;
  outcome: unknown;
  completed_at: string | null;
  files_changed: { added: string[]; modified: string[]; deleted: string[] } | null;
  verification: unknown;
}

export interface ViewLite {
  workflow: { id: string; status: string };
  tasks: TaskLite[];
  decisions: { id: string }[];
  issues: { id: string }[];
  milestones: { id: string }[];
  totals: { tasks: number; open_tasks: number; files_changed: number; decisions: number; issues: number };
  last_seq: number;
}

/** How many times a read-back waits out the read budget (a bench reads back hundreds of workflows from one address). */
const EXPORT_WAITS = 3;

/** The JSON export, waiting as a well-behaved reader does (Retry-After) when the read budget answers 429. */
export async function exportView(shareUrl: string): Promise<ViewLite> {
  for (let wait = 0; ; wait++) {
    const response = await fetch(`${shareUrl}/export.json`, { signal: AbortSignal.timeout(30_000) });
    if (response.ok) return (await response.json()) as ViewLite;
    const retryAfter = Number(response.headers.get("Retry-After"));
    if (response.status !== 429 || wait >= EXPORT_WAITS || !(retryAfter > 0))
      throw new Error(`${shareUrl}/export.json answered ${response.status}`);
    await response.body?.cancel();
    await new Promise((resolve) => setTimeout(resolve, Math.min(retryAfter, 60) * 1000));
  }
}

/**
 * The whole event log from the workflow object's live feed: catch-up from `after` until
 * "caught_up", pulling each further page the object announces with {"type":"more","seq":n}
 * by answering {"after":n} (an object that sends everything at once never announces one).
 */
export function readEvents(shareUrl: string, after = 0, timeoutMs = 30_000): Promise<EventLite[]> {
  const wsUrl = `${shareUrl.replace(/^http/, "ws")}/ws?after=${after}`;
  return new Promise((resolve, reject) => {
    const events: EventLite[] = [];
    const socket = new WebSocket(wsUrl);
    const timer = setTimeout(() => {
      socket.close();
      reject(new Error(`no caught_up from ${wsUrl} within ${timeoutMs} ms`));
    }, timeoutMs);
    // addEventListener: the one shape both Node's WebSocket and the workers types (which type-check this file) agree on.
    socket.addEventListener("message", (message) => {
      const body = JSON.parse(String(message.data)) as { type: string; event?: EventLite; seq?: number };
      if (body.type === "event" && body.event) events.push(body.event);
      if (body.type === "more") socket.send(JSON.stringify({ after: body.seq }));
      if (body.type === "caught_up") {
        clearTimeout(timer);
        socket.close();
        resolve(events);
      }
    });
    socket.addEventListener("error", () => {
      clearTimeout(timer);
      reject(new Error(`WebSocket ${wsUrl} failed`));
    });
  });
}

/**
 * Everything that must hold for a workflow after any run, crash or not: the event log is
 * 1..last_seq without a gap or a repeat; rows and events agree (a task.completed event means
 * the task row has its outcome and files; counts match); and every acknowledged id is there.
 * Returns the problems found (empty = consistent).
 */
export function checkConsistency(view: ViewLite, events: readonly EventLite[], acked?: Acked): string[] {
  const problems: string[] = [];
  const seqs = events.map((e) => e.seq);
  for (let i = 0; i < seqs.length; i++) {
    if (seqs[i] !== i + 1) {
      problems.push(`event seq not gap-free: position ${i} has seq ${seqs[i]}`);
      break;
    }
  }
  if (seqs.length !== view.last_seq) problems.push(`${seqs.length} events but last_seq ${view.last_seq}`);
  const count = (type: string) => events.filter((e) => e.type === type).length;
  const expect = (label: string, actual: number, wanted: number) => {
    if (actual !== wanted) problems.push(`${label}: ${actual} ≠ ${wanted}`);
  };
  expect("workflow.started events", count("workflow.started"), 1);
  expect("task.started events vs tasks", count("task.started"), view.tasks.length);
  expect("decision.logged events vs decisions", count("decision.logged"), view.decisions.length);
  expect("issue.logged events vs issues", count("issue.logged"), view.issues.length);
  expect("milestone.logged events vs milestones", count("milestone.logged"), view.milestones.length);
  expect("workflow.completed events", count("workflow.completed"), view.workflow.status === "active" ? 0 : 1);
  expect("totals.tasks", view.totals.tasks, view.tasks.length);
  expect("totals.decisions", view.totals.decisions, view.decisions.length);
  expect("totals.issues", view.totals.issues, view.issues.length);
  const completedEvents = new Map<string, number>();
  for (const e of events)
    if (e.type === "task.completed" && e.task_id) completedEvents.set(e.task_id, (completedEvents.get(e.task_id) ?? 0) + 1);
  const tasks = new Map(view.tasks.map((t) => [t.id, t]));
  for (const [taskId, n] of completedEvents) {
    if (n !== 1) problems.push(`task ${taskId}: ${n} task.completed events`);
    const task = tasks.get(taskId);
    if (!task) problems.push(`task ${taskId}: completed event but no task row`);
    else if (
      task.status === "in_progress" ||
      task.outcome === null ||
      task.completed_at === null ||
      !task.files_changed ||
      !task.verification
    ) {
      problems.push(`task ${taskId}: completed event but half-written row (status ${task.status})`);
    }
  }
  for (const task of view.tasks) {
    if (task.status !== "in_progress" && !completedEvents.has(task.id)) problems.push(`task ${task.id}: ${task.status} without an event`);
  }
  expect("totals.open_tasks", view.totals.open_tasks, view.tasks.filter((t) => t.status === "in_progress").length);
  const paths = new Set(
    view.tasks.flatMap((t) => (t.files_changed ? [...t.files_changed.added, ...t.files_changed.modified, ...t.files_changed.deleted] : [])),
  );
  expect("totals.files_changed vs distinct paths", view.totals.files_changed, paths.size);
  for (const [label, list] of [
    ["decision", view.decisions],
    ["issue", view.issues],
    ["milestone", view.milestones],
    ["task", view.tasks],
  ] as const) {
    if (new Set(list.map((x) => x.id)).size !== list.length) problems.push(`duplicate ${label} ids`);
  }
  if (acked) {
    const has = (list: { id: string }[], ids: string[], label: string) => {
      const present = new Set(list.map((x) => x.id));
      const missing = ids.filter((id) => !present.has(id));
      if (missing.length) problems.push(`${missing.length} acknowledged ${label}(s) missing, e.g. ${missing[0]}`);
    };
    has(view.tasks, acked.tasks, "task");
    has(view.decisions, acked.decisions, "decision");
    has(view.issues, acked.issues, "issue");
    has(view.milestones, acked.milestones, "milestone");
    for (const [taskId, files] of acked.completed) {
      const task = tasks.get(taskId);
      if (!task || task.status === "in_progress") problems.push(`acknowledged completion of ${taskId} missing`);
      else if (task.files_changed?.added.length !== files)
        problems.push(`task ${taskId}: ${task.files_changed?.added.length} files, sent ${files}`);
    }
    if (acked.workflowCompleted && view.workflow.status === "active") problems.push("acknowledged complete_workflow missing");
  }
  return problems;
}

/** Reads a workflow back (export + the full event log) and checks it. */
export async function verifyWorkflow(acked: Acked): Promise<string[]> {
  const [view, events] = await Promise.all([exportView(acked.shareUrl), readEvents(acked.shareUrl)]);
  return checkConsistency(view, events, acked).map((p) => `${acked.workflowId}: ${p}`);
}
