/**
 * The real-world case classes the README lists, through the real helper (`waymark mcp` over
 * stdio, run by the machine's own Node as npx runs it) and one shared `wrangler dev`: what the
 * agent's complete_task answers, and what the record keeps and shows (get_workflow, the JSON
 * export, the share page). A change in one part (the helper's snapshot, the wire, attribution,
 * storage, overlap, the pages) that breaks a class fails here.
 *
 * Classes covered elsewhere through the same chain, not repeated here: 50,000 files created
 * during a task and a missing project directory (helper-chain.test.ts). The helper's own
 * observations per class, in depth, are client-helper/test/*.
 */
import { existsSync, mkdirSync, utimesSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Client } from "@modelcontextprotocol/client";
import { WIRE_LIMITS } from "@waymark/protocol/wire-constants";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { cleanupTempDirs, FAST_TMP, Repo, tempDir } from "../../client-helper/test/fixtures";
import { ensureBuilt } from "../../client-helper/test/support";
import { connectThroughHelper } from "../support/agents";
import type { DevServer } from "../support/dev-server";
import { eventually } from "../support/eventually";
import { ok, type Structured } from "../support/mcp-client";
import { sharedDevServer } from "../support/shared-server";

let server: DevServer;
const clients: Client[] = [];

beforeAll(async () => {
  ensureBuilt();
  server = sharedDevServer();
});
afterAll(async () => {
  for (const client of clients) await client.close().catch(() => {});
  cleanupTempDirs();
});

/**
 * An agent with its own helper process in `dir`; agents given the same `cache` see each other's
 * tasks on a working tree. `env`: what the agent's environment adds (the helper inherits it).
 */
async function agent(dir: string, cache: string, env: Record<string, string> = {}): Promise<Client> {
  const saved = Object.fromEntries(Object.keys(env).map((name) => [name, process.env[name]]));
  Object.assign(process.env, env);
  try {
    const client = await connectThroughHelper(server, dir, { cacheHome: cache });
    clients.push(client);
    return client;
  } finally {
    for (const [name, value] of Object.entries(saved)) {
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    }
  }
}

/** Two agents, each with its own helper process, in one working tree with one user cache. */
async function twoAgents() {
  const repo = Repo.init().write("source/util.js", "u\n").write("source/version.js", "1\n").write("shared.txt", "s\n").commitAll("base");
  const cache = tempDir("waymark-cache-");
  return { repo, first: await agent(repo.dir, cache), second: await agent(repo.dir, cache) };
}

type Overlap = { path: string; task_id: string; same_change: boolean; workflow_id?: string };
interface TaskResult {
  task_id: string;
  files_changed: {
    added: string[];
    modified: string[];
    deleted: string[];
    uncommitted: string[];
    more?: number;
    truncated?: { omitted: number; directories: { path: string; added: number }[]; other: number };
  };
  verification: { warnings: string[]; overlapping?: Overlap[]; unexpected_files: string[] };
}

const tool = (client: Client, name: string, args: Structured) => ok(client, name, args);
const startWorkflow = async (client: Client, name: string) =>
  (await tool(client, "start_workflow", { name, force_new: true })) as { workflow_id: string; share_url: string };
const startTask = async (client: Client, workflow_id: string, name: string, extra: Structured = {}) =>
  ((await tool(client, "start_task", { workflow_id, name, goal: "g", ...extra })) as { task_id: string }).task_id;
const complete = async (client: Client, task_id: string) =>
  (await tool(client, "complete_task", { task_id, status: "success", outcome: { summary: "done" } })) as unknown as TaskResult;
const stored = async (client: Client, task_id: string) =>
  ((await tool(client, "get_workflow", { task_id })) as unknown as { task: TaskResult & { id: string } }).task;
/** What a task with helper data lists, in one line per file. */
const listed = (t: TaskResult) => [
  ...t.files_changed.added.map((p) => `A ${p}`),
  ...t.files_changed.modified.map((p) => `M ${p}`),
  ...t.files_changed.deleted.map((p) => `D ${p}`),
];
const CHANGED_BY_BOTH = ["shared.txt", "source/util.js", "source/version.js"];

describe("overlap: two agents (two helper processes, one user cache) in one working tree", () => {
  const editBoth = (repo: Repo) => repo.write("source/util.js", "u2\n").write("source/version.js", "2\n").write("shared.txt", "s2\n");

  it("tasks of two workflows: each reports the files both changed, in verification.overlapping and on its page", async () => {
    const { repo, first, second } = await twoAgents();
    const one = await startWorkflow(first, "Agent one");
    const two = await startWorkflow(second, "Agent two");
    const a = await startTask(first, one.workflow_id, "a");
    const b = await startTask(second, two.workflow_id, "b");
    editBoth(repo);
    const doneA = await complete(first, a);
    repo.write("only-b.txt", "b\n");
    const doneB = await complete(second, b);
    // Each workflow keeps its own record: both list the files.
    expect(listed(doneA)).toEqual(CHANGED_BY_BOTH.map((p) => `M ${p}`));
    expect(listed(doneB)).toEqual(["A only-b.txt", ...CHANGED_BY_BOTH.map((p) => `M ${p}`)]);
    // The second to complete names the first and the files both changed, the same change each.
    expect(doneB.verification.overlapping).toEqual(
      CHANGED_BY_BOTH.map((path) => ({ path, task_id: a, same_change: true, workflow_id: one.workflow_id })),
    );
    // The first learns it once the second completed (told after the second's reply): its record, its page.
    const recordA = await eventually(
      "the first task's record names the second",
      async () => {
        const record = await stored(first, a);
        return record.verification.overlapping?.length ? record : null;
      },
      10_000,
    );
    expect(recordA.verification.overlapping).toEqual(
      CHANGED_BY_BOTH.map((path) => ({ path, task_id: b, same_change: true, workflow_id: two.workflow_id })),
    );
    expect(recordA.verification.warnings.join("\n")).toContain(`also changed by task ${b}, in workflow ${two.workflow_id}`);
    const pageA = await (await fetch(one.share_url)).text();
    expect(pageA).toContain(`<code>source/util.js</code> also changed by ${b} (workflow ${two.workflow_id}) (same change)`);
    const pageB = await (await fetch(two.share_url)).text();
    expect(pageB).toContain(`<code>shared.txt</code> also changed by ${a} (workflow ${one.workflow_id}) (same change)`);
  }, 60_000);

  it("tasks of one workflow: the change is attributed once, to the first to complete, and reported on both", async () => {
    const { repo, first, second } = await twoAgents();
    const { workflow_id } = await startWorkflow(first, "One workflow, two agents");
    const a = await startTask(first, workflow_id, "a");
    const b = await startTask(second, workflow_id, "b");
    editBoth(repo);
    const doneA = await complete(first, a);
    const doneB = await complete(second, b);
    expect(listed(doneA)).toEqual(CHANGED_BY_BOTH.map((p) => `M ${p}`));
    expect(listed(doneB)).toEqual([]);
    expect(doneB.verification.overlapping).toEqual(CHANGED_BY_BOTH.map((path) => ({ path, task_id: a, same_change: true })));
    expect((await stored(first, a)).verification.overlapping).toEqual(
      CHANGED_BY_BOTH.map((path) => ({ path, task_id: b, same_change: true })),
    );
  }, 60_000);

  it("a parent and its own subtasks are never each other's overlap; a task of another workflow still is", async () => {
    const { repo, first, second } = await twoAgents();
    const one = await startWorkflow(first, "Nested");
    const two = await startWorkflow(second, "Other");
    const parent = await startTask(first, one.workflow_id, "parent");
    const child = await startTask(first, one.workflow_id, "child", { parent_task_id: parent });
    const other = await startTask(second, two.workflow_id, "other");
    editBoth(repo);
    const doneChild = await complete(first, child);
    const doneParent = await complete(first, parent);
    const doneOther = await complete(second, other);
    for (const done of [doneChild, doneParent]) {
      expect(done.verification.overlapping ?? []).toEqual([]);
      expect(done.verification.warnings.join("\n")).not.toMatch(new RegExp(`${parent}|${child}`));
    }
    // The other workflow's task overlapped with both: each of them records it.
    expect(new Set(doneOther.verification.overlapping?.map((o) => o.task_id))).toEqual(new Set([parent, child]));
    for (const id of [parent, child]) {
      expect((await stored(first, id)).verification.overlapping?.map((o) => [o.path, o.task_id])).toEqual(
        CHANGED_BY_BOTH.map((path) => [path, other]),
      );
    }
  }, 60_000);
});

describe("sizes: a task is always completable", () => {
  it("20,000 untracked files with long paths (over 8 MiB of names): listed up to the helper's 4 MiB, the rest in files_changed.truncated", async () => {
    const repo = Repo.init(FAST_TMP).write("a.txt", "a\n").commitAll("base");
    const client = await agent(repo.dir, tempDir("waymark-cache-"));
    const { workflow_id, share_url } = await startWorkflow(client, "Long paths");
    const task = await startTask(client, workflow_id, "generate");
    let nameBytes = 0;
    for (let i = 0; i < 20_000; i++) {
      const dir = `long/${"p".repeat(200)}/d${Math.floor(i / 500)}`;
      if (i % 500 === 0) mkdirSync(join(repo.dir, dir), { recursive: true });
      const base = `f${i}-`;
      const name = `${base}${"x".repeat(440 - dir.length - 1 - base.length)}`;
      writeFileSync(join(repo.dir, dir, name), `${i}\n`);
      nameBytes += dir.length + 1 + name.length;
    }
    expect(nameBytes).toBeGreaterThan(8 * 1024 * 1024);
    const started = Date.now();
    const done = await complete(client, task);
    const took = Date.now() - started;
    const f = done.files_changed;
    const truncated = f.truncated as NonNullable<TaskResult["files_changed"]["truncated"]>;
    const sent = 20_000 - truncated.omitted;
    expect(sent * 440).toBeLessThanOrEqual(WIRE_LIMITS.HELPER_LIST_BYTES);
    expect(f.added.length + (f.more ?? 0)).toBe(sent);
    expect(truncated.directories.reduce((sum, d) => sum + d.added, 0) + truncated.other).toBe(truncated.omitted);
    console.log(
      `20,000 long paths: complete_task ${took} ms; ${sent} listed (${f.added.length} in the result, ${f.more} more in the record), ${truncated.omitted} in files_changed.truncated over ${truncated.directories.length} directories`,
    );
    // The record holds every file sent; every read of it answers.
    const exported = (await (await fetch(`${share_url}/export.json`)).json()) as { tasks: TaskResult[] };
    expect(exported.tasks[0]?.files_changed.added).toHaveLength(sent);
    expect(exported.tasks[0]?.files_changed.truncated).toEqual(truncated);
    // The task's files page lists every one, a page of files at a time, following "Next files".
    let rows = 0;
    let pages = 0;
    for (let next: string | null = `${share_url}/files/${task}`; next; pages++) {
      const page = await (await fetch(next)).text();
      rows += page.match(/<tr class="file/g)?.length ?? 0;
      const link: string | undefined = /<a href="([^"]+)">Next files<\/a>/.exec(page)?.[1];
      next = link ? new URL(link.replaceAll("&amp;", "&"), share_url).href : null;
    }
    expect(rows).toBe(sent);
    expect(pages).toBe(Math.ceil(sent / 1000));
    expect((await tool(client, "complete_workflow", { workflow_id, status: "success", summary: "s" })).status).toBe("success");
  }, 240_000);

  it("a path at the file system's byte ceiling is carried exactly", async () => {
    const repo = Repo.init().write("a.txt", "a\n").commitAll("base");
    // PATH_MAX is 4,096 bytes for the absolute path: the repository-relative path gets what the temp dir leaves.
    const room = 4000 - repo.dir.length;
    const segments = Array.from({ length: Math.floor(room / 200) }, (_, i) => `${i}${"s".repeat(198)}`);
    const path = `${segments.join("/")}/f.txt`;
    const client = await agent(repo.dir, tempDir("waymark-cache-"));
    const { workflow_id } = await startWorkflow(client, "Deep path");
    const task = await startTask(client, workflow_id, "deep");
    repo.write(path, "deep\n");
    expect(listed(await complete(client, task))).toEqual([`A ${path}`]);
  }, 60_000);
});

describe("what git hides or converts", () => {
  it("conversions (autocrlf, eol attributes): files committed as they were at start are not listed; a real edit is", async () => {
    const repo = Repo.init().write(".gitattributes", "*.eol text eol=crlf\n");
    repo.write("a.eol", "a\r\n").write("b.txt", "b\n").commitAll("base");
    repo.git("config", "core.autocrlf", "true");
    repo.write("crlf.txt", "one\r\ntwo\r\n").write("a.eol", "a\r\nb\r\n");
    const client = await agent(repo.dir, tempDir("waymark-cache-"));
    const { workflow_id } = await startWorkflow(client, "Conversions");
    const task = await startTask(client, workflow_id, "commit as is");
    repo.commitPaths("as they were", "crlf.txt", "a.eol");
    repo.write("b.txt", "b2\n");
    expect(listed(await complete(client, task))).toEqual(["M b.txt"]);
  }, 60_000);

  it("a clean filter from the user's (trusted) config, core.fileMode=false, core.symlinks=false: files committed as they were at start are not listed", async () => {
    const globalConfig = join(tempDir(), "gitconfig");
    writeFileSync(globalConfig, '[filter "upper"]\n\tclean = tr a-z A-Z\n\tsmudge = cat\n');
    const env = { GIT_CONFIG_GLOBAL: globalConfig };
    const repo = Repo.init().write(".gitattributes", "*.up filter=upper\n").write("x.up", "base\n").write("run.sh", "#!/bin/sh\n");
    repo.write("target.txt", "t\n").symlink("link", "target.txt");
    repo.gitWith(env, "add", "-A");
    repo.gitWith(env, "commit", "-q", "-m", "base");
    repo.git("config", "core.fileMode", "false");
    // A link checked out as a plain file holding its target, then retargeted before the task.
    repo.git("config", "core.symlinks", "false");
    repo.remove("link");
    repo.git("checkout", "--", "link");
    repo.write("link", "other.txt");
    repo.write("x.up", "dirty at start\n").write("new.up", "untracked at start\n").chmod("run.sh", 0o755);
    const client = await agent(repo.dir, tempDir("waymark-cache-"), env);
    const { workflow_id } = await startWorkflow(client, "Filters");
    const task = await startTask(client, workflow_id, "commit as is");
    repo.gitWith(env, "add", "x.up", "new.up", "run.sh", "link");
    repo.gitWith(env, "commit", "-q", "-m", "as is");
    repo.write("edited.up", "new during the task\n");
    expect(listed(await complete(client, task))).toEqual(["A edited.up"]);
  }, 60_000);

  it("a clean filter the repository's own config defines (never run by the helper): files committed as they were at start are not listed; one no comparison can decide is said to be not observed", async () => {
    // An LFS-like filter: the agent's git runs it (AGENT_GIT set); a run without it would be the helper's.
    const scripts = tempDir("waymark-filter-");
    const ranByHelper = join(scripts, "ran-by-helper");
    const clean = join(scripts, "clean.sh");
    writeFileSync(
      clean,
      `#!/bin/sh\n[ -n "$AGENT_GIT" ] || echo ran >> '${ranByHelper}'\nprintf 'version https://git-lfs.github.com/spec/v1\\noid sha256:%s\\n' "$(sha256sum | cut -d' ' -f1)"\n`,
      { mode: 0o755 },
    );
    const agentGit = { AGENT_GIT: "1" };
    const repo = Repo.init();
    repo.git("config", "filter.pointer.clean", clean);
    repo.git("config", "filter.pointer.smudge", "cat");
    repo.git("config", "filter.pointer.required", "true");
    repo.write(".gitattributes", "*.bin filter=pointer\n").write("model.bin", "weights v1\n").write("clean.bin", "left alone\n");
    repo.gitWith(agentGit, "add", "-A");
    repo.gitWith(agentGit, "commit", "-q", "-m", "base");
    repo.write("model.bin", "weights v2, not committed yet\n").write("data.bin", "untracked at start\n");
    // Written a while ago, as a user's files are: git trusts their stat data (none is racily clean).
    const past = new Date(Date.now() - 60_000);
    for (const path of ["model.bin", "clean.bin", "data.bin"]) utimesSync(join(repo.dir, path), past, past);
    repo.gitWith(agentGit, "update-index", "-q", "--refresh");

    const client = await agent(repo.dir, tempDir("waymark-cache-"));
    const { workflow_id, share_url } = await startWorkflow(client, "Repository filter");
    const asIs = await startTask(client, workflow_id, "commit as is");
    repo.gitWith(agentGit, "add", "model.bin", "data.bin");
    repo.gitWith(agentGit, "commit", "-q", "-m", "as they were");
    expect(listed(await complete(client, asIs))).toEqual([]);

    // Rewritten with the same bytes: git cannot tell it from an edit without the filter, and its
    // start bytes were never read (it was clean): listed as git sees it, said to be not observed.
    const undecided = await startTask(client, workflow_id, "touch clean.bin");
    repo.write("clean.bin", "left alone\n");
    const done = await complete(client, undecided);
    expect(listed(done)).toEqual(["M clean.bin"]);
    expect(done.verification.warnings.join("\n")).toMatch(/filter=pointer.*not observed.*clean\.bin/);
    expect(await (await fetch(share_url)).text()).toMatch(
      /filter=pointer\), which the helper never runs: whether their content changed is not observed/,
    );
    expect(existsSync(ranByHelper)).toBe(false);
  }, 60_000);

  it("names that are not UTF-8: modified and added, exact on the wire and readable on the page", async () => {
    const latin1 = (name: string) => Buffer.from(name, "latin1");
    const repo = Repo.init().writeBytes(latin1("caf\xe9.txt"), "1\n").commitAll("base");
    const client = await agent(repo.dir, tempDir("waymark-cache-"));
    const { workflow_id, share_url } = await startWorkflow(client, "Latin-1");
    const task = await startTask(client, workflow_id, "edit");
    repo.writeBytes(latin1("caf\xe9.txt"), "2\n").writeBytes(latin1("na\xefve.txt"), "n\n");
    expect(listed(await complete(client, task))).toEqual(["A /na%EFve.txt", "M /caf%E9.txt"]);
    expect(await (await fetch(share_url)).text()).toContain("caf\\xE9.txt");
  }, 60_000);

  it("hidden files: an edit to a skip-worktree or assume-unchanged file is M", async () => {
    const repo = Repo.init().write("skip.txt", "s\n").write("assume.txt", "a\n").commitAll("base");
    repo.git("update-index", "--skip-worktree", "skip.txt");
    const client = await agent(repo.dir, tempDir("waymark-cache-"));
    const { workflow_id } = await startWorkflow(client, "Hidden");
    const task = await startTask(client, workflow_id, "edit hidden");
    repo.write("skip.txt", "s2\n").write("assume.txt", "a2\n");
    repo.git("update-index", "--assume-unchanged", "assume.txt");
    expect(listed(await complete(client, task))).toEqual(["M assume.txt", "M skip.txt"]);
  }, 60_000);
});

describe("the wrong repository is never observed", () => {
  it("inherited GIT_DIR and GIT_WORK_TREE pointing at another repository are ignored", async () => {
    const other = Repo.init().write("other.txt", "o\n").commitAll("other");
    const project = Repo.init().write("mine.txt", "m\n").commitAll("mine");
    const client = await agent(project.dir, tempDir("waymark-cache-"), { GIT_DIR: join(other.dir, ".git"), GIT_WORK_TREE: other.dir });
    const { workflow_id } = await startWorkflow(client, "Inherited git env");
    const task = await startTask(client, workflow_id, "t");
    project.write("mine.txt", "m2\n");
    other.write("other.txt", "o2\n");
    expect(listed(await complete(client, task))).toEqual(["M mine.txt"]);
  }, 60_000);

  it("a project folder ignored by an enclosing repository: compared by checksums, and the task says so", async () => {
    const outer = Repo.init().write(".gitignore", "build/\n").commitAll("outer");
    const project = join(outer.dir, "build", "project");
    mkdirSync(project, { recursive: true });
    writeFileSync(join(project, "a.txt"), "a\n");
    const client = await agent(project, tempDir("waymark-cache-"));
    const { workflow_id } = await startWorkflow(client, "Ignored folder");
    const task = await startTask(client, workflow_id, "t");
    writeFileSync(join(project, "a.txt"), "a2\n");
    writeFileSync(join(project, "b.txt"), "b\n");
    const done = await complete(client, task);
    expect(listed(done)).toEqual(["A b.txt", "M a.txt"]);
    expect(done.verification.warnings.join("\n")).toMatch(/compared by checksums/);
  }, 60_000);
});

describe("honest warnings", () => {
  it("a file hidden by editing .git/info/exclude during the task is flagged, and the helper is never said to be missing", async () => {
    const repo = Repo.init().write("a.txt", "a\n").commitAll("base");
    const client = await agent(repo.dir, tempDir("waymark-cache-"));
    const { workflow_id } = await startWorkflow(client, "Exclude");
    const task = await startTask(client, workflow_id, "t");
    repo.write("secret.txt", "hidden\n");
    writeFileSync(join(repo.dir, ".git", "info", "exclude"), "secret.txt\n");
    const done = await complete(client, task);
    const warnings = done.verification.warnings.join("\n");
    expect(warnings).toMatch(/ignore rules .*changed during the task/);
    expect(warnings).not.toMatch(/without helper data/);
    expect((await stored(client, task)).verification.warnings).toEqual(done.verification.warnings);
  }, 60_000);
});
