/**
 * @module workflow/plan-progress
 * Which completed tasks fulfilled each step of the workflow's plan (domain/plan), kept in the
 * object's memory: matching reads every completed task's name and goal, and the resume that
 * reports it follows every start_task and complete_task of a helper. So the tasks are read once
 * per object instance and each completion adds itself; a write that rolls back forgets them all
 * (the next resume reads them again). The plan is set when the workflow starts and never changes.
 */
import { type PlanStepRef, planStepMatcher, type StepProgress } from "../domain/plan";
import type { Sql } from "../storage/sql";

/** A task that fulfilled a step, where it goes in the step's list: oldest completion first, then by id. */
type Done = { at: number; id: string };

const before = (a: Done, b: Done) => a.at < b.at || (a.at === b.at && a.id < b.id);

export class PlanProgress {
  private kept: { match: (task: { name: string; goal: string }) => number[]; steps: Done[][] } | null = null;

  constructor(private readonly sql: Sql) {}

  /** The plan with, per step, the completed tasks (failed ones left out) that did it, oldest first. */
  of(plan: readonly PlanStepRef[]): StepProgress[] {
    if (!this.kept) {
      const match = planStepMatcher(plan);
      const steps: Done[][] = plan.map(() => []);
      for (const task of this.sql<{ id: string; name: string; goal: string; completed_at: number }>`
        SELECT id, name, goal, completed_at FROM tasks WHERE status NOT IN ('in_progress', 'failed') AND completed_at IS NOT NULL
        ORDER BY completed_at, id`)
        for (const index of match(task)) steps[index]?.push({ at: task.completed_at, id: task.id });
      this.kept = { match, steps };
    }
    const { steps } = this.kept;
    return plan.map((step, index) => ({ step: step.step, goal: step.goal, done_by: (steps[index] ?? []).map((done) => done.id) }));
  }

  /** A task completed (in the write now running): it joins the steps it fulfils, in order, once they are kept. */
  completed(task: { id: string; name: string; goal: string; status: string; completed_at: number | null }): void {
    if (!this.kept || task.status === "failed" || task.completed_at === null) return;
    const done = { at: task.completed_at, id: task.id };
    for (const index of this.kept.match(task)) {
      const list = this.kept.steps[index];
      if (!list) continue;
      // Nearly always the newest: from the end.
      let at = list.length;
      while (at > 0 && before(done, list[at - 1] as Done)) at--;
      list.splice(at, 0, done);
    }
  }

  forgetUncommitted(): void {
    this.kept = null;
  }
}
