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

/** A plan step with its label and goal normalised once, for matching many tasks against it. */
interface PreparedStep {
  label: string;
  goal: string;
}

const prepare = (step: PlanStepRef): PreparedStep => ({ label: normalizeName(step.step), goal: normalizeName(step.goal) });

function namesStep(name: string, label: string): boolean {
  if (label === "") return false;
  return name === label || name.startsWith(`${label} `) || name.startsWith(`step ${label} `) || name === `step ${label}`;
}

function carriesGoal(haystack: string, needle: string): boolean {
  if (needle === "" || haystack === "") return false;
  if (haystack === needle) return true;
  return needle.length >= MIN_CONTAINED && ` ${haystack} `.includes(` ${needle} `);
}

function fulfilsPrepared(name: string, goal: string, step: PreparedStep): boolean {
  return namesStep(name, step.label) || carriesGoal(name, step.goal) || carriesGoal(goal, step.goal);
}

export function fulfils(task: DoneTaskRef, step: PlanStepRef): boolean {
  return fulfilsPrepared(normalizeName(task.name), normalizeName(task.goal), prepare(step));
}

/**
 * The plan's steps a task fulfils (indexes into the plan), for callers that see tasks one at a
 * time (a streamed page): the plan is normalised once, each task once.
 */
export function planStepMatcher(plan: readonly PlanStepRef[]): (task: Pick<DoneTaskRef, "name" | "goal">) => number[] {
  const steps = plan.map(prepare);
  return (task) => {
    const name = normalizeName(task.name);
    const goal = normalizeName(task.goal);
    const matched: number[] = [];
    steps.forEach((step, index) => {
      if (fulfilsPrepared(name, goal, step)) matched.push(index);
    });
    return matched;
  };
}

/** The plan with, per step, the completed tasks that did it (tasks given oldest first). */
export function planProgress(plan: readonly PlanStepRef[], done: readonly DoneTaskRef[]): StepProgress[] {
  const matcher = planStepMatcher(plan);
  const progress: StepProgress[] = plan.map((step) => ({ step: step.step, goal: step.goal, done_by: [] }));
  for (const task of done) for (const index of matcher(task)) progress[index]?.done_by.push(task.task_id);
  return progress;
}
