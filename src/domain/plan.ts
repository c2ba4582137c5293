/**
 * @module domain/plan
 * Which tasks fulfilled which plan steps, "where names allow": a step is done by a completed
 * task that names it (its step label as a prefix, "2. …", "Step 2: …") or whose name or goal
 * carries the step's goal. Agents name tasks after plan steps more often than not; when they
 * don't, the step is simply not tied to a task (never guessed from weak overlap).
 */

export interface PlanStepRef {
  step: string;
  goal: string;
}

export interface DoneTaskRef {
  task_id: string;
  name: string;
  goal: string;
}

export interface StepProgress {
  step: string;
  goal: string;
  /** Tasks that did this step, oldest first; empty when none is known to have. */
  done_by: string[];
}

/** Shorter goals than this are too generic to be recognised inside another text. */
const MIN_CONTAINED = 8;

export function normalizeName(text: string): string {
  return text
    .toLowerCase()
    .normalize("NFKD")
    .replace(/[\u0300-\u036f]/g, "")
    .replace(/[^\p{L}\p{N}]+/gu, " ")
    .trim();
}

function namesStep(taskName: string, step: string): boolean {
  const label = normalizeName(step);
  if (label === "") return false;
  const name = normalizeName(taskName);
  return name === label || name.startsWith(`${label} `) || name.startsWith(`step ${label} `) || name === `step ${label}`;
}

function carriesGoal(text: string, goal: string): boolean {
  const haystack = normalizeName(text);
  const needle = normalizeName(goal);
  if (needle === "" || haystack === "") return false;
  if (haystack === needle) return true;
  return needle.length >= MIN_CONTAINED && ` ${haystack} `.includes(` ${needle} `);
}

export function fulfils(task: DoneTaskRef, step: PlanStepRef): boolean {
  return namesStep(task.name, step.step) || carriesGoal(task.name, step.goal) || carriesGoal(task.goal, step.goal);
}

/** The plan with, per step, the completed tasks that did it (tasks given oldest first). */
export function planProgress(plan: readonly PlanStepRef[], done: readonly DoneTaskRef[]): StepProgress[] {
  return plan.map((step) => ({ step: step.step, goal: step.goal, done_by: done.filter((t) => fulfils(t, step)).map((t) => t.task_id) }));
}
