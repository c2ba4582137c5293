import { describe, expect, it } from "vitest";
import { fulfils, planProgress, planStepMatcher } from "../../src/domain/plan";

const task = (name: string, goal = "") => ({ task_id: "tk", name, goal });

describe("plan steps tied to tasks where names allow", () => {
  it.each([
    // [task name, task goal, step label, step goal, fulfils]
    ["1. Install NextAuth v5", "", "1", "Install NextAuth v5", true],
    ["Step 2: migrate callbacks", "", "2", "Migrate callbacks", true],
    ["step 2", "", "2", "Migrate callbacks", true],
    ["Migrate callbacks", "", "2", "Migrate callbacks", true],
    ["Migrate the callbacks", "", "2", "Migrate callbacks", false],
    ["Auth work", "Migrate callbacks to the v5 API", "2", "Migrate callbacks", true],
    ["Install NEXTAUTH v5!", "", "1", "install nextauth v5", true],
    ["Créer le schéma", "", "a", "creer le schema", true],
    ["12. Something", "", "1", "Something else entirely", false],
    ["Step 12", "", "1", "Whatever", false],
    ["Tests", "", "3", "Tests", true],
    ["Write tests for login", "", "3", "Tests", false],
    ["Anything", "", "", "", false],
  ])("task %j (goal %j) vs step %j %j → %s", (name, goal, step, stepGoal, expected) => {
    expect(fulfils(task(name, goal), { step, goal: stepGoal })).toBe(expected);
  });

  it("lists, per step, the tasks that did it, oldest first, and leaves unknown steps empty", () => {
    const plan = [
      { step: "1", goal: "Install NextAuth v5" },
      { step: "2", goal: "Migrate callbacks" },
      { step: "3", goal: "Update the docs" },
    ];
    const done = [
      { task_id: "tk_a", name: "1. Install NextAuth v5", goal: "" },
      { task_id: "tk_b", name: "Step 2 part one", goal: "" },
      { task_id: "tk_c", name: "Callbacks, rest", goal: "Migrate callbacks" },
    ];
    expect(planProgress(plan, done)).toEqual([
      { step: "1", goal: "Install NextAuth v5", done_by: ["tk_a"] },
      { step: "2", goal: "Migrate callbacks", done_by: ["tk_b", "tk_c"] },
      { step: "3", goal: "Update the docs", done_by: [] },
    ]);
  });

  it.each([
    ["1. Install NextAuth v5", "", [0]],
    ["Install NextAuth v5 and migrate callbacks", "", [0, 1]],
    ["Unrelated", "Nothing", []],
    ["Docs", "Update the docs", [2]],
  ])("a streamed page matches each task once against the prepared plan: %s", (name, goal, steps) => {
    const match = planStepMatcher([
      { step: "1", goal: "Install NextAuth v5" },
      { step: "2", goal: "Migrate callbacks" },
      { step: "3", goal: "Update the docs" },
    ]);
    expect(match({ name, goal })).toEqual(steps);
  });
});
