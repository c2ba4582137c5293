/**
 * @module test/support/actions-runner
 * A composite action run as GitHub's runner runs it, for the parts a composite action of `run:`
 * steps uses: each step's script written to a file and run with `bash --noprofile --norc -eo
 * pipefail <file>` (the runner's `shell: bash`) in its working directory, with the runner's
 * environment plus the step's `env:`; `${{ inputs.* }}` (defaults included) and `${{ github.token }}`
 * evaluated in `env:` and `working-directory:` (an expression this does not know fails the run,
 * rather than being passed on unevaluated); each step with GITHUB_OUTPUT and GITHUB_STEP_SUMMARY
 * files of its own, its outputs read back with GitHub's `name=value` / `name<<delimiter` syntax;
 * a failing step stops the run; the action's outputs evaluated from `${{ steps.<id>.outputs.<name> }}`.
 * Steps run as child processes without blocking the test's event loop (servers the test runs answer them).
 *
 * A job of a workflow file runs the same way (runWorkflowJob): its `if:` and its steps' expressions
 * read the event (`github.event.*`, from the payload in GITHUB_EVENT_PATH), substituted into a
 * `run:` script's text before it runs, as the runner does; a `uses:` step is done by the test's
 * own stand-in for that action (actions/checkout: a clone).
 */
import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { parse } from "yaml";

type Step = {
  id?: string;
  name?: string;
  shell?: string;
  run?: string;
  env?: Record<string, string>;
  "working-directory"?: string;
  uses?: string;
};
type Action = {
  inputs?: Record<string, { default?: string; required?: boolean }>;
  outputs?: Record<string, { value: string }>;
  runs: { using: string; steps: Step[] };
};

export interface StepRun {
  id: string | null;
  name: string;
  status: number | null;
  stdout: string;
  stderr: string;
  outputs: Record<string, string>;
  summary: string;
}

export interface ActionRun {
  /** The action's exit: the first failing step's status, else 0. */
  status: number;
  steps: StepRun[];
  outputs: Record<string, string>;
  /** Every step's summary, as the job's summary shows them in order. */
  summary: string;
}

/** GitHub's GITHUB_OUTPUT file syntax: `name=value` lines and `name<<delimiter` … `delimiter` blocks. */
export function parseOutputFile(text: string): Record<string, string> {
  const outputs: Record<string, string> = {};
  const lines = text.split("\n");
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i] ?? "";
    if (line === "") continue;
    const heredoc = /^([^=<]+)<<(.+)$/.exec(line);
    if (heredoc?.[1] && heredoc[2]) {
      const end = lines.indexOf(heredoc[2], i + 1);
      if (end < 0) throw new Error(`GITHUB_OUTPUT: ${heredoc[1]}: no closing delimiter ${heredoc[2]}`);
      outputs[heredoc[1]] = lines.slice(i + 1, end).join("\n");
      i = end;
      continue;
    }
    const eq = line.indexOf("=");
    if (eq <= 0) throw new Error(`GITHUB_OUTPUT: not an output line: ${JSON.stringify(line)}`);
    outputs[line.slice(0, eq)] = line.slice(eq + 1);
  }
  return outputs;
}

type Context = {
  inputs: Record<string, string>;
  github: Record<string, string>;
  steps: Record<string, Record<string, string>>;
  /** The triggering event's payload (a workflow job's `github.event`). */
  event?: unknown;
};

/** `github.event.<path>` in the event's payload, as the expression language reads it (a missing member is null). */
function eventValue(event: unknown, path: string): unknown {
  let value = event;
  for (const key of path.split(".")) value = value !== null && typeof value === "object" ? (value as Record<string, unknown>)[key] : null;
  return value ?? null;
}

/** One expression's value as text, as the runner writes it into a string (null is empty). */
function expressionText(expression: string, context: Context): string {
  const input = /^inputs\.([\w-]+)$/.exec(expression);
  if (input?.[1] !== undefined) return context.inputs[input[1]] ?? "";
  const event = /^github\.event\.([\w.-]+)$/.exec(expression);
  if (event?.[1] !== undefined && context.event !== undefined) {
    const value = eventValue(context.event, event[1]);
    return value === null ? "" : typeof value === "object" ? JSON.stringify(value) : String(value);
  }
  const github = /^github\.(\w+)$/.exec(expression);
  if (github?.[1] !== undefined && github[1] in context.github) return context.github[github[1]] ?? "";
  const output = /^steps\.([\w-]+)\.outputs\.([\w-]+)$/.exec(expression);
  if (output?.[1] !== undefined && output[2] !== undefined) return context.steps[output[1]]?.[output[2]] ?? "";
  throw new Error(`expression not supported by the test runner: ${expression}`);
}

/** Evaluates the expressions this runner knows in a value; anything else is an error. */
function evaluate(value: string, context: Context): string {
  return value.replace(/\$\{\{\s*([^}]+?)\s*\}\}/g, (_, expression: string) => expressionText(expression, context));
}

/** One `run:` step: its script in a file, run by bash in its working directory, with output and summary files of its own. */
async function runStep(
  step: Step,
  script: string,
  index: number,
  temp: string,
  context: Context,
  options: { env: Record<string, string>; workspace: string; timeoutMs?: number },
): Promise<StepRun> {
  const file = join(temp, `step-${index}.sh`);
  const outputFile = join(temp, `output-${index}`);
  const summaryFile = join(temp, `summary-${index}`);
  writeFileSync(file, script);
  writeFileSync(outputFile, "");
  writeFileSync(summaryFile, "");
  const env: Record<string, string> = {
    ...options.env,
    GITHUB_WORKSPACE: options.workspace,
    GITHUB_OUTPUT: outputFile,
    GITHUB_STEP_SUMMARY: summaryFile,
  };
  for (const [name, value] of Object.entries(step.env ?? {})) env[name] = evaluate(String(value), context);
  const cwd = resolve(options.workspace, evaluate(step["working-directory"] ?? ".", context));
  const run = await runBash([file], cwd, env, options.timeoutMs ?? 240_000);
  const outputs = parseOutputFile(readFileSync(outputFile, "utf8"));
  if (step.id) context.steps[step.id] = outputs;
  return {
    id: step.id ?? null,
    name: step.name ?? `step ${index}`,
    status: run.status,
    stdout: run.stdout,
    stderr: run.stderr,
    outputs,
    summary: readFileSync(summaryFile, "utf8"),
  };
}

/**
 * Runs the composite action in `actionFile` with `inputs` (as a workflow's `with:` gives them),
 * `env` (the runner's environment: GITHUB_* and whatever the job sets) and `workspace` (GITHUB_WORKSPACE).
 */
export async function runCompositeAction(
  actionFile: string,
  options: { inputs: Record<string, string>; env: Record<string, string>; workspace: string; githubToken: string; timeoutMs?: number },
): Promise<ActionRun> {
  const action = parse(readFileSync(actionFile, "utf8")) as Action;
  if (action.runs.using !== "composite") throw new Error(`${actionFile}: runs.using is ${action.runs.using}, not composite`);
  const inputs: Record<string, string> = {};
  const github = { token: options.githubToken };
  for (const [name, spec] of Object.entries(action.inputs ?? {})) {
    const given = options.inputs[name];
    if (given === undefined && spec.required) throw new Error(`input ${name} is required`);
    inputs[name] = given ?? evaluate(spec.default ?? "", { inputs: {}, github, steps: {} });
  }
  for (const name of Object.keys(options.inputs)) if (!(name in inputs)) throw new Error(`input ${name} is not an input of the action`);
  const temp = mkdtempSync(join(tmpdir(), "waymark-runner-"));
  const steps: StepRun[] = [];
  const stepOutputs: Record<string, Record<string, string>> = {};
  let status = 0;
  for (const [index, step] of action.runs.steps.entries()) {
    if (step.uses !== undefined || step.run === undefined) throw new Error(`step ${index}: only run steps are supported here`);
    if (step.shell !== "bash") throw new Error(`step ${index}: shell ${String(step.shell)}: a composite run step must name its shell`);
    const context = { inputs, github, steps: stepOutputs };
    const run = await runStep(step, step.run, index, temp, context, options);
    steps.push(run);
    if (run.status !== 0) {
      status = run.status ?? 1;
      break;
    }
  }
  const outputs: Record<string, string> = {};
  for (const [name, spec] of Object.entries(action.outputs ?? {}))
    outputs[name] = evaluate(spec.value, { inputs, github, steps: stepOutputs });
  return { status, steps, outputs, summary: steps.map((step) => step.summary).join("") };
}

/** A job of a workflow file, as parsed from its YAML. */
export type WorkflowJob = { if?: string; steps: (Step & { with?: Record<string, unknown> })[] };

/** What the test does for a `uses:` step, given the step's `with:` evaluated. */
export type ActionStandIn = (inputs: Record<string, string>) => void | Promise<void>;

/**
 * Runs a workflow's job for `event` (the payload the runner writes to GITHUB_EVENT_PATH): its `if:`
 * (with or without `${{ }}`, as GitHub accepts it on a job), then its steps in order, each `run:`
 * with its expressions substituted into the script's text first (as the runner does) and run by
 * bash with -e and pipefail; a `uses:` step by `actions[uses]`. `ran` is false when `if:` held the job back.
 */
export async function runWorkflowJob(
  job: WorkflowJob,
  options: {
    event: unknown;
    env: Record<string, string>;
    workspace: string;
    githubToken: string;
    actions: Record<string, ActionStandIn>;
    timeoutMs?: number;
  },
): Promise<ActionRun & { ran: boolean }> {
  const context: Context = { inputs: {}, github: { token: options.githubToken }, steps: {}, event: options.event };
  if (job.if !== undefined) {
    const condition = job.if.trim().replace(/^\$\{\{\s*([\s\S]*?)\s*\}\}$/, "$1");
    const value = expressionText(condition, context);
    if (value === "" || value === "false" || value === "0") return { ran: false, status: 0, steps: [], outputs: {}, summary: "" };
  }
  const temp = mkdtempSync(join(tmpdir(), "waymark-runner-"));
  const steps: StepRun[] = [];
  let status = 0;
  for (const [index, step] of job.steps.entries()) {
    if (step.uses !== undefined) {
      const standIn = options.actions[step.uses];
      if (!standIn) throw new Error(`step ${index}: no stand-in for ${step.uses}`);
      const inputs = Object.fromEntries(Object.entries(step.with ?? {}).map(([name, value]) => [name, evaluate(String(value), context)]));
      await standIn(inputs);
      continue;
    }
    if (step.run === undefined) throw new Error(`step ${index}: neither uses nor run`);
    const run = await runStep(step, evaluate(step.run, context), index, temp, context, options);
    steps.push(run);
    if (run.status !== 0) {
      status = run.status ?? 1;
      break;
    }
  }
  return { ran: true, status, steps, outputs: {}, summary: steps.map((step) => step.summary).join("") };
}

/**
 * The environment GitHub's runner gives a job's steps: this machine's (without npm's, Waymark's or
 * GitHub's own variables of the test process), CI and GITHUB_ACTIONS set, the event's name and
 * payload file, the repository, the REST API's URL, and an npm cache of the test's.
 */
export function runnerEnv(
  job: { eventName: string; eventPath: string; repository: string; apiUrl: string; npmCache: string },
  extra: Record<string, string> = {},
): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (value !== undefined && !key.startsWith("npm_") && !key.startsWith("WAYMARK_") && !key.startsWith("GITHUB_")) env[key] = value;
  }
  return {
    ...env,
    CI: "true",
    GITHUB_ACTIONS: "true",
    GITHUB_EVENT_NAME: job.eventName,
    GITHUB_EVENT_PATH: job.eventPath,
    GITHUB_REPOSITORY: job.repository,
    GITHUB_API_URL: job.apiUrl,
    GITHUB_SERVER_URL: "https://github.com",
    GITHUB_RUN_ID: "4242",
    npm_config_cache: job.npmCache,
    npm_config_update_notifier: "false",
    ...extra,
  };
}

/**
 * `bash --noprofile --norc -eo pipefail <args>`, as GitHub's runner runs a `shell: bash` step (a
 * script file) and GitLab's a job's script (`-c` and its lines), without blocking the event loop.
 */
export function runBash(args: readonly string[], cwd: string, env: Record<string, string>, timeoutMs = 240_000) {
  return new Promise<{ status: number | null; stdout: string; stderr: string }>((resolve, reject) => {
    const child = spawn("bash", ["--noprofile", "--norc", "-eo", "pipefail", ...args], { cwd, env, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.setEncoding("utf8").on("data", (chunk: string) => {
      stdout += chunk;
    });
    child.stderr.setEncoding("utf8").on("data", (chunk: string) => {
      stderr += chunk;
    });
    const timer = setTimeout(() => child.kill("SIGKILL"), timeoutMs);
    child.on("error", reject);
    child.on("close", (status) => {
      clearTimeout(timer);
      resolve({ status, stdout, stderr });
    });
  });
}
