/**
 * @module bench/upgrade-check
 * The upgrade as an operator makes it: an older build (`node bench/upgrade-check.ts [ref]`, d0cf18c
 * by default) serves a persisted state directory that real clients fill (workflows with tasks,
 * subtasks, every log kind, a task past its log window, a failed task, a completed workflow, a
 * paired device's signed completions, a workflow the real helper records in a git repository with
 * a device paired as a person pairs one, the owner's verdicts, live, expiring, revoked and expired
 * share links, the exports and `waymark verify` on them); then this build serves the same directory
 * on the same port, and everything a user reads is read again and compared byte for byte (what is
 * new at each read masked: `comparable`). Then it keeps writing to the upgraded workflows and checks
 * the new entries read back after the old ones (the helper completes the task it started on the old
 * build), and the account's resume and dashboard row. Prints each difference; exits 1 when any.
 * The helper (`waymark mcp`, `waymark verify`) is this checkout's build (npm run build:helper).
 * docs/storage.md ("Upgrading over existing data") has what it found.
 */
import { execFileSync, spawnSync } from "node:child_process";
import { appendFileSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { BIN, SYSTEM_NODE } from "../client-helper/test/support.ts";
import { type CallTool, toolCaller } from "../test/pages/fixture.ts";
import { connectThroughHelper } from "../test/support/agents.ts";
import { freePort, startDevServer } from "../test/support/dev-server.ts";
import { ok } from "../test/support/mcp-client.ts";
import { ownerSession, reviewTask } from "../test/support/owner-session.ts";
import { approvedDevice, loadDeviceKeys } from "./lib/device-keys.ts";
import { checkOutOldBuild } from "./lib/old-build.ts";

const ROOT = join(import.meta.dirname, "..");
const ref = process.argv[2] ?? "d0cf18c";
const keep = process.argv.includes("--keep");
/** Stop the old build right after the last read, without waiting for its account pushes (a deploy waits for nothing): any still due run on this build. */
const noWait = process.argv.includes("--no-wait");
const token = `dev-token-${Math.random().toString(36).slice(2, 12)}`;
const signingKeys = execFileSync(process.execPath, [join(ROOT, "scripts", "signing-key.mjs")], { cwd: ROOT })
  .toString()
  .trim();
const vars = { WAYMARK_SIGNING_KEYS: signingKeys };
const state = mkdtempSync(join(tmpdir(), "waymark-upgrade-"));
const files = mkdtempSync(join(tmpdir(), "waymark-upgrade-files-"));
const signers = join(files, "allowed-signers");
const port = await freePort();
const url = `http://127.0.0.1:${port}`;

interface Filled {
  workflows: { id: string; name: string; share: string | null; tasks: string[] }[];
  milestoneTask: string;
  openTask: { taskId: string; nonce: string };
  openWorkflow: string;
  /** Signs a completion as the device's helper does. */
  signCompletion(task: { taskId: string; nonce: string }): Promise<Record<string, unknown>>;
  /** The workflow the real helper recorded in a git repository, and its task left open. */
  helper: { workflowId: string; name: string; openTask: string };
}

/** The real helper (`waymark mcp`, this checkout's build) of a device paired as a person pairs one, in a git repository. */
const helperHome = {
  config: mkdtempSync(join(tmpdir(), "waymark-upgrade-config-")),
  cache: mkdtempSync(join(tmpdir(), "waymark-upgrade-cache-")),
  repo: mkdtempSync(join(tmpdir(), "waymark-upgrade-repo-")),
};
const GIT_ENV = {
  ...process.env,
  GIT_AUTHOR_NAME: "Dev",
  GIT_AUTHOR_EMAIL: "dev@example.com",
  GIT_COMMITTER_NAME: "Dev",
  GIT_COMMITTER_EMAIL: "dev@example.com",
};
const git = (...args: string[]) => execFileSync("git", args, { cwd: helperHome.repo, env: GIT_ENV, encoding: "utf8" });
const connectHelper = () =>
  connectThroughHelper({ url, token }, helperHome.repo, {
    cacheHome: helperHome.cache,
    env: { XDG_CONFIG_HOME: helperHome.config },
    quiet: true,
  });

/** `waymark device pair`, then the owner approves its code on the Devices page; the key is pinned in the allowed signers. */
async function pairHelper(cookie: string): Promise<void> {
  const env = { ...process.env, XDG_CONFIG_HOME: helperHome.config, WAYMARK_TOKEN: token };
  const run = spawnSync(SYSTEM_NODE, [BIN, "device", "pair", "--url", `${url}/mcp`, "--name", "workstation"], { env, encoding: "utf8" });
  const code = /\b[A-Z2-9]{4}-[A-Z2-9]{4}\b/.exec(run.stdout)?.[0];
  const line = run.stdout
    .split("\n")
    .map((l) => l.trim())
    .find((l) => l.includes("waymark-ed25519"));
  if (run.status !== 0 || !code || !line) throw new Error(`waymark device pair: ${run.status}\n${run.stdout}${run.stderr}`);
  const approved = await fetch(`${url}/dashboard/devices/approve`, {
    method: "POST",
    headers: { "Content-Type": "application/x-www-form-urlencoded", Origin: url, Cookie: cookie },
    body: new URLSearchParams({ code, name: "workstation" }).toString(),
    redirect: "manual",
  });
  if (approved.status !== 303) throw new Error(`approving ${code} answered ${approved.status}: ${(await approved.text()).slice(0, 300)}`);
  appendFileSync(signers, `${line}\n`);
}

/** An agent's session through the helper: a task that commits, one that fails, one left open with an uncommitted edit. */
async function helperWork(workflows: Filled["workflows"]): Promise<Filled["helper"]> {
  git("init", "-q", "-b", "main");
  writeFileSync(join(helperHome.repo, "README.md"), "# Demo\n");
  git("add", "-A");
  git("commit", "-qm", "initial");
  const agent = await connectHelper();
  try {
    const name = "Helper work";
    const wf = await ok<{ workflow_id: string; share_url: string }>(agent, "start_workflow", { name });
    const start = (task: string) =>
      ok<{ task_id: string }>(agent, "start_task", { workflow_id: wf.workflow_id, name: task, goal: `${task} done`, areas: ["src/**"] });
    const first = await start("Add the parser");
    writeFileSync(join(helperHome.repo, "parser.ts"), "export const parse = (s: string) => s.split(',');\n");
    await ok(agent, "log_milestone", { task_id: first.task_id, message: "parser written", progress: 80 });
    git("add", "-A");
    git("commit", "-qm", "Add the parser");
    await ok(agent, "complete_task", { task_id: first.task_id, status: "success", outcome: { summary: "parser added" } });
    const failing = await start("Speed it up");
    writeFileSync(join(helperHome.repo, "parser.ts"), "export const parse = (s: string) => s.split(/,/);\n");
    await ok(agent, "log_issue", {
      task_id: failing.task_id,
      type: "other",
      description: "slower",
      resolution: "reverted",
      requires_human_review: true,
    });
    git("checkout", "--", "parser.ts");
    await ok(agent, "complete_task", { task_id: failing.task_id, status: "failed", outcome: { summary: "no faster" } });
    const open = await start("Document it");
    writeFileSync(join(helperHome.repo, "README.md"), "# Demo\n\nparse(s) splits on commas.\n");
    workflows.push({ id: wf.workflow_id, name, share: wf.share_url, tasks: [first.task_id, failing.task_id, open.task_id] });
    return { workflowId: wf.workflow_id, name, openTask: open.task_id };
  } finally {
    await agent.close();
  }
}

async function fill(callTool: CallTool): Promise<Filled> {
  const keys = await loadDeviceKeys();
  const device = await approvedDevice({ url, token }, keys);
  writeFileSync(signers, `laptop waymark-ed25519 ${device.key}\n`);
  const head = "c".repeat(40);
  const workflows: Filled["workflows"] = [];
  const signedTask = async (workflowId: string, name: string, parent?: string) => {
    const snapshot = await device.signSnapshot({ type: "git", head, branch: "main", dirty: [] }, workflowId);
    const started = await callTool("start_task", {
      workflow_id: workflowId,
      name,
      goal: `${name}: goal`,
      areas: ["src/**"],
      snapshot,
      ...(parent ? { parent_task_id: parent } : {}),
    });
    return { taskId: String(started.task_id), nonce: keys.nonceOf(snapshot) };
  };
  const signCompletion = (task: { taskId: string; nonce: string }) =>
    device.signChanges(
      {
        type: "git",
        start_head: head,
        head,
        committed: [],
        dirty: [{ path: `src/${task.taskId}.ts`, head: null, worktree: { mode: "100644", blob: "a".repeat(40) } }],
      },
      null,
      task.taskId,
      task.nonce,
    );
  const complete = async (task: { taskId: string; nonce: string }, status: string, summary: string) =>
    callTool("complete_task", {
      task_id: task.taskId,
      status,
      outcome: { summary, achievements: [`${summary} achieved`], manual_review_needed: status === "failed" },
      metadata: { commands_executed: ["npm test"], tests_status: status === "failed" ? "failed" : "passed" },
      changes: await signCompletion(task),
    });
  let milestoneTask = "";
  let openTask = { taskId: "", nonce: "" };
  for (const [n, name] of ["Billing export", "Auth rewrite", "Search index", "Docs pass"].entries()) {
    const wf = await callTool("start_workflow", {
      name,
      description: `${name} description`,
      plan: [
        { step: "Design", goal: `${name} designed` },
        { step: "Build", goal: `${name} built` },
      ],
    });
    const id = String(wf.workflow_id);
    const root = await signedTask(id, `${name} root`);
    const child = await signedTask(id, `${name} child`, root.taskId);
    const sibling = await signedTask(id, `${name} sibling`, root.taskId);
    await callTool("log_decision", {
      task_id: root.taskId,
      category: "architecture",
      question: `${name}: which store?`,
      options_considered: ["SQLite", "KV"],
      chosen: "SQLite",
      reasoning: "Transactions",
      trade_offs: "One writer",
    });
    for (let i = 0; i < 3; i++)
      await callTool("log_issue", {
        task_id: child.taskId,
        type: "bug_encountered",
        description: `${name} issue ${i}`,
        resolution: `fixed ${i}`,
        requires_human_review: i % 2 === 0,
      });
    const milestones = n === 0 ? 130 : 5;
    for (let i = 0; i < milestones; i++)
      await callTool("log_milestone", {
        task_id: (n === 0 ? root : child).taskId,
        message: `${name} milestone ${i}`,
        progress: Math.min(100, i),
        metadata: { i },
      });
    await callTool("log_decision", {
      task_id: child.taskId,
      category: "trade_off",
      question: `${name}: retry?`,
      chosen: "Yes",
      reasoning: "Flaky network",
    });
    await complete(child, "success", `${name} child done`);
    await complete(sibling, n === 1 ? "failed" : "partial_success", `${name} sibling done`);
    if (n === 0) milestoneTask = root.taskId;
    const tasks = [root.taskId, child.taskId, sibling.taskId];
    if (n === 1) {
      await complete(root, "success", `${name} root done`);
      await callTool("complete_workflow", {
        workflow_id: id,
        status: "partial_success",
        summary: `${name} finished`,
        achievements: ["most"],
      });
    } else if (n === 0) openTask = root;
    workflows.push({ id, name, share: wf.share_url ? String(wf.share_url) : null, tasks });
  }
  // The owner's verdicts from the page.
  const cookie = await ownerSession(url, token);
  await pairHelper(cookie);
  const helper = await helperWork(workflows);
  const [a, b] = workflows as [Filled["workflows"][0], Filled["workflows"][0]];
  await reviewTask(url, cookie, { workflow: a.id, task: a.tasks[1] as string, verdict: "approved", body: "Looks right" });
  await reviewTask(url, cookie, { workflow: b.id, task: b.tasks[2] as string, verdict: "changes_requested", body: "Retry the failure" });
  await reviewTask(url, cookie, { workflow: a.id, task: a.tasks[2] as string, verdict: "comment", body: "Why partial?" });
  // The third workflow's link revoked.
  const third = workflows[2] as Filled["workflows"][0];
  const revoked = await fetch(`${url}/api/workflows/${third.id}/share`, {
    method: "POST",
    headers: { Authorization: `Bearer ${token}`, "Content-Type": "application/json" },
    body: JSON.stringify({ action: "revoke" }),
  });
  if (!revoked.ok) throw new Error(`revoke answered ${revoked.status}: ${await revoked.text()}`);
  // The second workflow's link with a day's expiry; the fourth's rotated, then expired.
  const manage = async (wf: Filled["workflows"][0], body: Record<string, unknown>) => {
    const response = await fetch(`${url}/api/workflows/${wf.id}/share`, {
      method: "POST",
      headers: { Authorization: `Bearer ${token}`, "Content-Type": "application/json" },
      body: JSON.stringify(body),
    });
    if (!response.ok) throw new Error(`share ${JSON.stringify(body)} answered ${response.status}: ${await response.text()}`);
    return (await response.json()) as { share_url: string | null };
  };
  await manage(b, { action: "set_expiry", expires_in_seconds: 86_400 });
  const fourth = workflows[3] as Filled["workflows"][0];
  fourth.share = (await manage(fourth, { action: "rotate" })).share_url;
  await manage(fourth, { action: "set_expiry", expires_in_seconds: 1 });
  await new Promise((resolve) => setTimeout(resolve, 1_500));
  return { workflows, milestoneTask, openTask, openWorkflow: a.id, signCompletion, helper };
}

/** Everything a user reads, by name: status and body, the CSP nonce masked. */
async function capture(callTool: CallTool, filled: Filled, phase: string): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  const cookie = await ownerSession(url, token);
  const get = async (name: string, path: string, headers: Record<string, string> = {}) => {
    const response = await patientFetch(new URL(path, url).href, { headers, redirect: "manual" });
    const body = await response.text();
    out.set(name, `${response.status}\n${comparable(body)}`);
    return body;
  };
  const owner = { Cookie: cookie };
  const bearer = { Authorization: `Bearer ${token}` };
  for (const wf of filled.workflows) {
    out.set(`get_workflow ${wf.name}`, JSON.stringify(await callTool("get_workflow", { workflow_id: wf.id }), null, 1));
    for (const task of wf.tasks)
      out.set(`get_workflow task ${wf.name} ${task}`, JSON.stringify(await callTool("get_workflow", { task_id: task }), null, 1));
    await get(`owner page ${wf.name}`, `/w/${wf.id}`, owner);
    await get(`owner blocks ${wf.name}`, `/w/${wf.id}/blocks`, owner);
    for (const task of wf.tasks) await get(`owner files ${wf.name} ${task}`, `/w/${wf.id}/files/${task}`, owner);
    const json = await get(`export.json ${wf.name}`, `/api/workflows/${wf.id}/export.json`, bearer);
    await get(`export.md ${wf.name}`, `/api/workflows/${wf.id}/export.md`, bearer);
    await get(`export.agent-trace ${wf.name}`, `/api/workflows/${wf.id}/export.agent-trace.json`, bearer);
    await get(`share api ${wf.name}`, `/api/workflows/${wf.id}/share`, bearer);
    const file = join(files, `${phase}-${wf.id}.json`);
    writeFileSync(file, json);
    out.set(`verify ${wf.name}`, verify(file));
    if (wf.share) {
      const path = new URL(wf.share).pathname;
      await get(`share page ${wf.name}`, path);
      await get(`share export.json ${wf.name}`, `${path}/export.json`);
      for (const task of wf.tasks) await get(`share files ${wf.name} ${task}`, `${path}/files/${task}`);
    }
  }
  await get("dashboard", "/dashboard", owner);
  await get("api workflows", "/api/workflows", bearer);
  await get("api search", `/api/search?q=${encodeURIComponent("Billing")}`, bearer);
  await get("api paths", `/api/paths?path=${encodeURIComponent("src/")}`, bearer);
  await get("insights", "/api/insights", bearer);
  await get("insights csv", "/api/insights.csv", bearer);
  await get("insights page", "/dashboard/insights", owner);
  out.set("get_workflow open list", JSON.stringify(await callTool("get_workflow", {}), null, 1));
  out.set("get_workflow query", JSON.stringify(await callTool("get_workflow", { query: "milestone" }), null, 1));
  return out;
}

/** A read retried once after the wait a 429 asks for (exports are 20 a minute per account, wrangler.toml). */
async function patientFetch(target: string, init: RequestInit): Promise<Response> {
  const response = await fetch(target, init);
  if (response.status !== 429) return response;
  await new Promise((resolve) => setTimeout(resolve, 1_000 * Number(response.headers.get("Retry-After") ?? 60)));
  return fetch(target, init);
}

/**
 * What must not change between two reads: the page's CSP nonce and an export statement's issue
 * time and signature (signed at each download) are masked, everything else is kept byte for byte.
 */
function comparable(text: string): string {
  return text
    .replace(/nonce-[A-Za-z0-9+/=_-]+|nonce="[^"]*"/g, "nonce")
    .replace(/"issued_at":\s*"[^"]*"/g, '"issued_at": "…"')
    .replace(/"signature":\s*"[^"]*"(\s*}\s*}\s*)$/, '"signature": "…"$1')
    .replace(/signed \d{4}-\d\d-\d\dT[\d:.]+Z/g, "signed …");
}

function verify(file: string): string {
  const run = spawnSync(SYSTEM_NODE, [BIN, "verify", file, "--endpoint", url, "--allowed-signers", signers], { encoding: "utf8" });
  return comparable(`${run.status}\n${run.stdout}${run.stderr}`);
}

const problems: string[] = [];
const old = checkOutOldBuild(ref);
try {
  console.log(`upgrade-check: ${ref} (${old.commit.slice(0, 7)}) fills ${state} on ${url}`);
  const before = await startDevServer({ root: old.dir, persistTo: state, token, vars, port });
  let filled: Filled;
  let seen: Map<string, string>;
  let resumedBefore: Record<string, unknown>;
  try {
    const callTool = toolCaller(fetch, `${url}/mcp`, token);
    filled = await fill(callTool);
    // The first read delivers the owner's feedback to the agent (its delivered_at): the second is what the upgrade must keep.
    for (const wf of filled.workflows) await callTool("get_workflow", { workflow_id: wf.id });
    seen = await capture(callTool, filled, "before");
    // What the comparison holds the new build to: the live links open, the revoked and expired ones refused, every export served.
    const status = (name: string) => Number((seen.get(name) ?? "0").split("\n", 1)[0]);
    const [billing, auth, search, docs] = filled.workflows.map((wf) => wf.name);
    const expected: [string, (code: number) => boolean][] = [
      [`share page ${billing}`, (code) => code === 200],
      [`share page ${auth}`, (code) => code === 200],
      [`share page ${search}`, (code) => code >= 400],
      [`share page ${docs}`, (code) => code >= 400],
      ...filled.workflows.flatMap((wf): [string, (code: number) => boolean][] => [
        [`owner page ${wf.name}`, (code) => code === 200],
        [`export.json ${wf.name}`, (code) => code === 200],
        [`export.md ${wf.name}`, (code) => code === 200],
      ]),
    ];
    for (const [name, holds] of expected) if (!holds(status(name))) problems.push(`on the old build, ${name} answered ${status(name)}`);
    resumedBefore = await callTool("start_workflow", { name: "Billing export" });
    // The account pushes the old build scheduled, done before it stops (unless --no-wait).
    if (!noWait) await new Promise((resolve) => setTimeout(resolve, 5_000));
  } finally {
    await before.stop();
  }
  console.log("upgrade-check: this build on the same state");
  const after = await startDevServer({ persistTo: state, token, vars, port });
  try {
    const callTool = toolCaller(fetch, `${url}/mcp`, token);
    // The export downloaded before the upgrade, verified against the upgraded deployment.
    for (const wf of filled.workflows) {
      const result = verify(join(files, `before-${wf.id}.json`));
      if (result !== seen.get(`verify ${wf.name}`)) problems.push(`verify of the old export of ${wf.name} after the upgrade:\n${result}`);
    }
    const now = await capture(callTool, filled, "after");
    for (const [name, value] of seen) {
      const later = now.get(name);
      if (later !== value) {
        writeFileSync(join(files, `${name.replaceAll(/[^\w]+/g, "_")}.before`), value);
        writeFileSync(join(files, `${name.replaceAll(/[^\w]+/g, "_")}.after`), later ?? "(missing)");
        problems.push(`${name} differs (${files})`);
      }
    }
    // `waymark verify` on the exports downloaded before passed, and gives the same report on the ones downloaded after (compared above).
    for (const wf of filled.workflows) {
      const result = seen.get(`verify ${wf.name}`) ?? "";
      if (!result.startsWith("0\n"))
        problems.push(`verify of an export downloaded before the upgrade, on the old build (${wf.name}):\n${result}`);
    }
    const resumed = await callTool("start_workflow", { name: "Billing export" });
    if (JSON.stringify(resumed) !== JSON.stringify(resumedBefore))
      problems.push(`resume by name: ${JSON.stringify(resumedBefore)}\n  → ${JSON.stringify(resumed)}`);
    // Writing on: entries on the old task come after its old ones, a new task after the old tasks.
    await callTool("log_milestone", { task_id: filled.milestoneTask, message: "after the upgrade" });
    // The device's helper completes the task it started on the old build: signed, naming that start's nonce.
    await callTool("log_decision", {
      task_id: filled.openTask.taskId,
      category: "other",
      question: "after?",
      chosen: "yes",
      reasoning: "upgrade",
    });
    await callTool("complete_task", {
      task_id: filled.openTask.taskId,
      status: "success",
      outcome: { summary: "closed after the upgrade" },
      changes: await filled.signCompletion(filled.openTask),
    });
    // The helper started a task on the old build; a new helper process (same cache) completes it on this one.
    const agent = await connectHelper();
    try {
      git("add", "-A");
      git("commit", "-qm", "Document the parser");
      await ok(agent, "complete_task", { task_id: filled.helper.openTask, status: "success", outcome: { summary: "documented" } });
      const resumedHelper = await ok<{ workflow_id: string }>(agent, "start_workflow", { name: filled.helper.name });
      if (resumedHelper.workflow_id !== filled.helper.workflowId)
        problems.push(`the helper's resume by name: ${JSON.stringify(resumedHelper)}`);
    } finally {
      await agent.close();
    }
    const helperExport = join(files, "helper-final.json");
    const helperResponse = await patientFetch(`${url}/api/workflows/${filled.helper.workflowId}/export.json`, {
      headers: { Authorization: `Bearer ${token}` },
    });
    writeFileSync(helperExport, await helperResponse.text());
    const helperCheck = verify(helperExport);
    if (!helperCheck.startsWith("0\n") || !helperCheck.includes("checked, allowed signer"))
      problems.push(`verify of the helper's workflow after its task completed across the upgrade:\n${helperCheck}`);
    else
      console.log(
        `upgrade-check: the helper's workflow after the upgrade: ${helperCheck
          .split("\n")
          .filter((l) => l.includes("files:"))
          .join(" ")}`,
      );
    const fresh = await callTool("start_task", { workflow_id: filled.openWorkflow, name: "New task", goal: "after the upgrade" });
    await callTool("log_issue", {
      task_id: String(fresh.task_id),
      type: "other",
      description: "new issue",
      resolution: "none",
      requires_human_review: true,
    });
    const finalResponse = await patientFetch(`${url}/api/workflows/${filled.openWorkflow}/export.json`, {
      headers: { Authorization: `Bearer ${token}` },
    });
    const finalText = await finalResponse.text();
    writeFileSync(join(files, "final.json"), finalText);
    if (!finalResponse.ok) throw new Error(`the export after writing on answered ${finalResponse.status}: ${finalText.slice(0, 500)}`);
    const exported = JSON.parse(finalText) as {
      milestones: { message: string; task_id: string }[];
      decisions: { question: string }[];
      issues: { description: string }[];
      tasks: { id: string; status: string }[];
    };
    const milestones = exported.milestones.filter((m) => m.task_id === filled.milestoneTask).map((m) => m.message);
    if (milestones.length !== 131 || milestones.at(-1) !== "after the upgrade")
      problems.push(`milestones of the old task after a new one: ${milestones.length}, last ${milestones.at(-1)}`);
    if (exported.decisions.at(-1)?.question !== "after?") problems.push(`last decision: ${exported.decisions.at(-1)?.question}`);
    if (exported.issues.at(-1)?.description !== "new issue") problems.push(`last issue: ${exported.issues.at(-1)?.description}`);
    if (exported.tasks.at(-1)?.id !== fresh.task_id) problems.push("the new task is not last");
    // The account side on upgraded data: resume by name finds the open workflow, never the completed
    // one; the dashboard row counts the writes made after the upgrade (counts may wait for the
    // workflow's alarm, ACCOUNT_LAZY_PUSH_MS: polled up to 90 s).
    const [billing, auth, search] = filled.workflows as [Filled["workflows"][0], Filled["workflows"][0], Filled["workflows"][0]];
    const searchResumed = await callTool("start_workflow", { name: search.name });
    if (searchResumed.workflow_id !== search.id || searchResumed.resumed !== true)
      problems.push(`resume by name of the open "${search.name}": ${JSON.stringify(searchResumed)}`);
    const authAgain = await callTool("start_workflow", { name: auth.name });
    if (authAgain.workflow_id === auth.id) problems.push(`the completed "${auth.name}" was resumed: ${JSON.stringify(authAgain)}`);
    const deadline = Date.now() + 90_000;
    let row: { tasks?: number; open_tasks?: number } | undefined;
    for (;;) {
      const page = (await (await fetch(`${url}/api/workflows`, { headers: { Authorization: `Bearer ${token}` } })).json()) as {
        rows: { id: string; tasks: number; open_tasks: number }[];
      };
      row = page.rows.find((r) => r.id === billing.id);
      if ((row?.tasks === 4 && row.open_tasks === 1) || Date.now() > deadline) break;
      await new Promise((resolve) => setTimeout(resolve, 1_000));
    }
    if (row?.tasks !== 4 || row.open_tasks !== 1)
      problems.push(`the dashboard row of "${billing.name}" after writing on: ${JSON.stringify(row)} (4 tasks, 1 open expected)`);
    const final = join(files, "final.json");
    writeFileSync(final, finalText);
    const finalCheck = verify(final);
    if (!finalCheck.startsWith("0\n")) problems.push(`verify after writing on: ${finalCheck}`);
  } finally {
    await after.stop();
  }
} finally {
  old.remove();
  if (!keep) for (const dir of [state, ...Object.values(helperHome)]) rmSync(dir, { recursive: true, force: true });
}
console.log(`upgrade-check: ${problems.length} difference(s)${problems.length ? `\n${problems.join("\n")}` : ""}`);
// The reads of each side are kept where they differ (named in each difference), and with --keep.
if (problems.length === 0 && !keep) rmSync(files, { recursive: true, force: true });
process.exitCode = problems.length ? 1 : 0;
