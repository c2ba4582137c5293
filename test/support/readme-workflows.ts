/**
 * @module test/support/readme-workflows
 * The GitHub Actions workflows the README gives a team to copy ("In your pull requests"), read out
 * of README.md itself, so a test runs what the documentation says and fails when the two part: the
 * pull-request check (`name: Waymark`, the action with its inputs) and the job after the merge
 * (`waymark notes carry`, then the notes pushed).
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { parse } from "yaml";
import type { WorkflowJob } from "./actions-runner.ts";

const ROOT = join(import.meta.dirname, "../..");

/** The ```yaml blocks of a Markdown file of the repository. */
export function yamlBlocks(file: string): string[] {
  return [...readFileSync(join(ROOT, file), "utf8").matchAll(/```yaml\n([\s\S]*?)```/g)].map((match) => match[1] ?? "");
}

export interface CheckWorkflow {
  text: string;
  workflow: {
    on: string;
    permissions: Record<string, string>;
    jobs: { record: { steps: { uses?: string; with?: Record<string, unknown>; id?: string }[] } };
  };
  /** What its Waymark step gives the action, with the secrets it names filled in. */
  inputs: Record<string, string>;
}

/** The pull-request check the README gives (`name: Waymark`), undefined when it has none. */
export function checkWorkflow(secrets: Record<string, string>, file = "README.md"): CheckWorkflow | undefined {
  const text = yamlBlocks(file).find((block) => block.startsWith("name: Waymark\n"));
  if (text === undefined) return undefined;
  const workflow = parse(text) as CheckWorkflow["workflow"];
  const waymark = workflow.jobs.record.steps.find((step) => step.id === "waymark");
  const inputs: Record<string, string> = {};
  for (const [name, value] of Object.entries(waymark?.with ?? {})) {
    inputs[name] = String(value).replace(/\$\{\{\s*secrets\.(\w+)\s*\}\}/g, (_, secret: string) => secrets[secret] ?? "");
  }
  return { text, workflow, inputs };
}

/**
 * The job the README runs after a merge (the block that runs `waymark notes carry`), with the
 * placeholder of the endpoint's host (`https://<your-host>`) replaced by `endpoint`, as a team fills it in.
 */
export function afterMergeJob(endpoint: string): { on: unknown; job: WorkflowJob } {
  const text = yamlBlocks("README.md").find((block) => block.includes("waymark notes carry"));
  if (text === undefined) throw new Error("README.md has no workflow that runs waymark notes carry");
  const workflow = parse(text.replaceAll("https://<your-host>", endpoint)) as { on: unknown; jobs: Record<string, WorkflowJob> };
  const jobs = Object.values(workflow.jobs);
  if (jobs.length !== 1) throw new Error(`README.md's after-merge workflow has ${jobs.length} jobs, not one`);
  return { on: workflow.on, job: jobs[0] as WorkflowJob };
}
