/**
 * A realistic reviewed workflow, recorded the way an agent records one: a real git repository
 * (with a GitHub remote) in a temporary directory and the real helper (`waymark mcp` over stdio,
 * the built bin) between an MCP client and a running endpoint, the agent holding a write token of
 * its own (made by the owner, as the README says), and the agent's edit and shell hooks fed the
 * payloads Claude Code sends (the installed hook's own command line spools them; the helper reads
 * them at complete_task). Nested tasks, commits, a rename, a binary file, a file outside the
 * declared areas, an uncommitted change, decisions, milestones, issues (one flagged for review), a
 * task asking for manual review and a failed one; tests observed failing then passing after the
 * last edit, tests that ran before a later edit, a lint run. The page tests assert on it and
 * `npm run screenshots` photographs it; EXPECTED says what a reviewer must see.
 */
import { execFileSync, spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { ensureBuilt } from "../../client-helper/test/support.ts";
import { spoolCommand } from "../../packages/protocol/src/agent-config.ts";
import { agentWriteToken, connectThroughHelper } from "../support/agents.ts";
import { ok, type Structured } from "../support/mcp-client.ts";

const lines = (prefix: string, count: number) => Array.from({ length: count }, (_, i) => `${prefix} ${i + 1}\n`).join("");

/** What the page must show for this workflow. */
export const EXPECTED = {
  /** Top-level tasks, then each task's timeline (logs and subtasks in time order), by name or text. */
  roots: ["1. Tax rate table", "3. Invoice totals", "Update the PDF export"],
  timelineOf: {
    "1. Tax rate table": [
      "Reading the current rate code",
      "Where do the rates live?",
      "Parse the rates CSV",
      "Rounding rules",
      "Rate table and rounding in place",
    ],
    "Parse the rates CSV": ["Parser done, 12 regions"],
    "Rounding rules": ["Rounding differs from the accounting export by one cent on 3 invoices"],
  } as Record<string, string[]>,
  badges: {
    "1. Tax rate table": "success",
    "Parse the rates CSV": "success",
    "Rounding rules": "success",
    "3. Invoice totals": "success",
    "Update the PDF export": "failed",
  } as Record<string, string>,
  /** Per task: path → what its files table says (+added −removed, binary, or the rename). */
  files: {
    "Parse the rates CSV": { "src/billing/rates.ts": "+48 −0", "src/billing/rates.csv": "+12 −0" },
    "Rounding rules": { "src/billing/round.ts": "+6 −3", "docs/notes.md → docs/rounding.md": "+0 −0", "assets/vat-badge.png": "binary" },
    "3. Invoice totals": { "src/invoice/total.ts": "+15 −4", "README.md": "+3 −0" },
  } as Record<string, Record<string, string>>,
  outsideAreas: ["assets/vat-badge.png", "README.md"],
  uncommitted: ["assets/vat-badge.png", "README.md"],
  plan: { "1": "1. Tax rate table", "2": "Rounding rules", "3": "3. Invoice totals" } as Record<string, string>,
};

export interface RecordedReview {
  workflowId: string;
  shareUrl: string;
  /** Task name → id. */
  tasks: Record<string, string>;
  issueForReview: string;
  /** The agent's own write token (the owner made it), and its id. */
  agentToken: { id: string; token: string };
  /** The repository's remote as git has it. */
  remote: string;
}

/** The remote the repository is cloned from: the page links its changes to the host's compare view. */
export const REMOTE = "https://github.com/acme/shop.git";

/** A git repository in a temporary directory (what the agent works in). */
class Repository {
  readonly dir = mkdtempSync(join(tmpdir(), "waymark-review-"));

  git(...args: string[]): string {
    const env = {
      ...process.env,
      GIT_CONFIG_GLOBAL: "/dev/null",
      GIT_CONFIG_NOSYSTEM: "1",
      GIT_AUTHOR_NAME: "Dev",
      GIT_AUTHOR_EMAIL: "dev@example.com",
      GIT_COMMITTER_NAME: "Dev",
      GIT_COMMITTER_EMAIL: "dev@example.com",
    };
    return execFileSync("git", args, { cwd: this.dir, env, encoding: "utf8" });
  }

  write(path: string, content: string | Buffer): this {
    mkdirSync(dirname(join(this.dir, path)), { recursive: true });
    writeFileSync(join(this.dir, path), content);
    return this;
  }
}

/**
 * The agent's hooks as Claude Code runs them: its payload on stdin of the installed PostToolUse
 * (or, for a command that exited non-zero, PostToolUseFailure) command line, which spools it for the
 * helper (@waymark/protocol/agent-config spoolCommand). Edits and commands are dated by when they
 * were spooled.
 */
class AgentHooks {
  private calls = 0;
  private readonly repo: Repository;
  private readonly cacheHome: string;

  constructor(repo: Repository, cacheHome: string) {
    this.repo = repo;
    this.cacheHome = cacheHome;
  }

  private hook(event: string, payload: Record<string, unknown>): void {
    const input = JSON.stringify({
      session_id: "5c0a9f1e-2b3d-4e5f-8a9b-0c1d2e3f4a5b",
      transcript_path: join(this.cacheHome, "transcript.jsonl"),
      cwd: this.repo.dir,
      permission_mode: "acceptEdits",
      hook_event_name: event,
      tool_use_id: `toolu_01${String(++this.calls).padStart(22, "0")}`,
      ...payload,
    });
    const env = { ...process.env, XDG_CACHE_HOME: this.cacheHome };
    const result = spawnSync("sh", ["-c", spoolCommand(CLAUDE_SPOOL)], { cwd: this.repo.dir, input, env, encoding: "utf8" });
    if (result.status !== 0) throw new Error(`the ${event} hook failed: ${result.stderr}`);
  }

  /** The agent's Write or Edit tool changed a file. */
  edits(path: string, content: string, tool: "Write" | "Edit" = "Edit"): void {
    this.repo.write(path, content);
    const file_path = join(this.repo.dir, path);
    this.hook("PostToolUse", {
      tool_name: tool,
      tool_input: tool === "Write" ? { file_path, content } : { file_path, old_string: "", new_string: content },
      tool_response: { filePath: file_path, success: true },
    });
  }

  /** The agent's Bash tool ran a command that exited `exit`. */
  runs(command: string, exit: number): void {
    const tool_input = { command, description: "Run it" };
    if (exit === 0)
      this.hook("PostToolUse", {
        tool_name: "Bash",
        tool_input,
        tool_response: { stdout: "ok", stderr: "", interrupted: false, isImage: false },
        duration_ms: 1800,
      });
    else
      this.hook("PostToolUseFailure", {
        tool_name: "Bash",
        tool_input,
        error: `Exit code ${exit}\nnot ok 1`,
        is_interrupt: false,
        duration_ms: 2100,
      });
  }
}

/**
 * What Claude Code's edit hook spools as (its name, and the answer it reads from the hook: none).
 * Spelled here because this file also runs under Node's type stripping (`npm run screenshots`),
 * which cannot load packages/protocol/src/agents/claude.ts's extensionless imports.
 */
const CLAUDE_SPOOL = { name: "claude", answers: { silence: null } } as unknown as Parameters<typeof spoolCommand>[0];

export async function recordReviewWorkflow(
  server: { url: string; token: string },
  options: { complete: boolean },
): Promise<RecordedReview> {
  ensureBuilt();
  const cacheHome = mkdtempSync(join(tmpdir(), "waymark-cache-"));
  const repo = new Repository();
  repo.git("init", "-q", "-b", "main");
  repo.git("remote", "add", "origin", REMOTE);
  repo
    .write("src/billing/round.ts", lines("round", 20))
    .write("src/invoice/total.ts", lines("total", 30))
    .write("docs/notes.md", "Rounding notes\n")
    .write("README.md", "# Shop\n")
    .write("package.json", '{ "name": "shop", "private": true, "scripts": { "test": "node --test", "lint": "biome check" } }\n');
  repo.git("add", "-A");
  repo.git("commit", "-q", "-m", "initial");
  const agentToken = await agentWriteToken(server, "review agent");
  const hooks = new AgentHooks(repo, cacheHome);
  const agent = await connectThroughHelper({ url: server.url, token: agentToken.token }, repo.dir, { cacheHome, name: "review-agent" });
  const tool = (name: string, args: Structured) => ok(agent, name, args);
  const tasks: Record<string, string> = {};
  const start = async (args: Structured) => {
    const started = await tool("start_task", { workflow_id: workflowId, ...args });
    tasks[String(args.name)] = String(started.task_id);
    return String(started.task_id);
  };
  const wf = await tool("start_workflow", {
    name: "Regional VAT on invoices",
    description: "Apply the regional VAT rates to invoice totals and the PDF export.",
    plan: [
      { step: "1", goal: "Tax rate table" },
      { step: "2", goal: "Rounding rules" },
      { step: "3", goal: "Invoice totals" },
      { step: "4", goal: "Update the PDF export" },
    ],
  });
  const workflowId = String(wf.workflow_id);

  const root = await start({
    name: "1. Tax rate table",
    goal: "Rates per region, loaded from a reviewed CSV",
    areas: ["src/billing/**", "docs/**"],
  });
  await tool("log_milestone", { task_id: root, message: "Reading the current rate code", progress: 10 });
  await tool("log_decision", {
    task_id: root,
    category: "architecture",
    question: "Where do the rates live?",
    options_considered: ["database", "code"],
    chosen: "code",
    reasoning: "Rates change yearly; a reviewed table in code is enough.",
    trade_offs: "A release for each rate change",
  });

  const parse = await start({
    parent_task_id: root,
    name: "Parse the rates CSV",
    goal: "Load rates.csv into a typed table",
    areas: ["src/billing/**"],
  });
  // Written by the agent's tools; the tests fail, the agent fixes the parser, the tests pass.
  hooks.edits("src/billing/rates.ts", lines("rate", 47), "Write");
  hooks.edits("src/billing/rates.csv", lines("region", 12), "Write");
  hooks.runs("npm test", 1);
  hooks.edits("src/billing/rates.ts", lines("rate", 48));
  hooks.runs("npm test", 0);
  repo.git("add", "-A");
  repo.git("commit", "-q", "-m", "Add the rate table");
  await tool("log_milestone", { task_id: parse, message: "Parser done, 12 regions", progress: 60 });
  await tool("complete_task", {
    task_id: parse,
    status: "success",
    outcome: { summary: "Rates load from a CSV checked at build time.", achievements: ["12 regions"] },
    metadata: { tests_status: "passed", commands_executed: ["npm test"] },
  });

  const rounding = await start({
    parent_task_id: root,
    name: "Rounding rules",
    goal: "Round VAT half-even per line",
    areas: ["src/billing/**", "docs/**"],
  });
  hooks.edits("src/billing/round.ts", `${lines("round", 17)}${lines("half-even", 6)}`);
  hooks.runs("git status --short", 0);
  repo.git("commit", "-q", "-am", "Round half-even");
  repo.git("mv", "docs/notes.md", "docs/rounding.md");
  repo.git("commit", "-q", "-m", "Move the rounding notes");
  repo.write("assets/vat-badge.png", Buffer.from([0x89, 0x50, 0x4e, 0x47, 0, 0, 0, 0x0d, 1, 2, 3, 0]));
  const issue = await tool("log_issue", {
    task_id: rounding,
    type: "bug_encountered",
    description: "Rounding differs from the accounting export by one cent on 3 invoices",
    resolution: "Rounded half-even, as the accounting export does",
    requires_human_review: true,
  });
  await tool("complete_task", { task_id: rounding, status: "success", outcome: { summary: "Half-even rounding per line." } });
  await tool("log_milestone", { task_id: root, message: "Rate table and rounding in place", progress: 100 });
  await tool("complete_task", { task_id: root, status: "success", outcome: { summary: "Regional rates and rounding are in place." } });

  const totals = await start({ name: "3. Invoice totals", goal: "Use the regional rates in invoice totals", areas: ["src/invoice/**"] });
  hooks.edits("src/invoice/total.ts", `${lines("total", 26)}${lines("regional", 15)}`);
  hooks.runs("npm test", 0);
  hooks.runs("npm run lint", 0);
  repo.git("commit", "-q", "-am", "Invoice totals use regional VAT");
  // Edited after the tests ran: they were not run again.
  hooks.edits("README.md", "# Shop\n\nVAT: see src/billing.\nRates: src/billing/rates.csv\n");
  await tool("log_decision", {
    task_id: totals,
    category: "trade_off",
    question: "Round per line or per invoice?",
    options_considered: ["per line", "per invoice"],
    chosen: "per line",
    reasoning: "Matches the accounting export.",
  });
  await tool("complete_task", {
    task_id: totals,
    status: "success",
    outcome: {
      summary: "Totals use regional VAT.",
      manual_review_needed: true,
      manual_review_reason: "Money: check the three sample invoices",
    },
    metadata: { tests_status: "passed", commands_executed: ["npm test", "npm run lint"] },
    metrics: { input_tokens: 182_400, output_tokens: 12_950, model: "claude-sonnet", cost_usd: 1.37 },
  });

  const pdf = await start({ name: "Update the PDF export", goal: "Show VAT per region on the PDF", areas: ["src/pdf/**"] });
  hooks.runs("npm test -- pdf", 1);
  await tool("log_issue", {
    task_id: pdf,
    type: "dependency_conflict",
    description: "pdfkit 0.15 breaks the table layout",
    resolution: "Left for a human: pinning pdfkit is out of scope",
  });
  await tool("complete_task", {
    task_id: pdf,
    status: "failed",
    outcome: { summary: "The PDF layout breaks with pdfkit 0.15." },
    metadata: { tests_status: "failed", commands_executed: ["npm test -- pdf"] },
  });
  if (options.complete) {
    await tool("complete_workflow", {
      workflow_id: workflowId,
      status: "partial_success",
      summary: "VAT applied to invoices; the PDF export is left.",
    });
  }
  await agent.close();
  return { workflowId, shareUrl: String(wf.share_url), tasks, issueForReview: String(issue.id), agentToken, remote: REMOTE };
}
