import { execFileSync, spawnSync } from "node:child_process";
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { VERSION } from "../../client-helper/src/cli";
import { cleanupTempDirs, Repo, tempDir } from "../../client-helper/test/fixtures";
import { BIN, ensureBuilt, SYSTEM_NODE } from "../../client-helper/test/support";
import { connectThroughHelper } from "../support/agents";
import type { DevServer } from "../support/dev-server";
import { callTool, ok, type Structured } from "../support/mcp-client";
import { sharedDevServer } from "../support/shared-server";

let server: DevServer;
let cacheHome: string;

beforeAll(async () => {
  ensureBuilt();
  cacheHome = tempDir("waymark-cache-");
  // What `waymark hook` leaves behind for hooks: the launcher the commit-trailer hook runs.
  mkdirSync(join(cacheHome, "waymark"), { recursive: true });
  writeFileSync(join(cacheHome, "waymark", `helper-${VERSION}.mjs`), `import ${JSON.stringify(pathToFileURL(BIN).href)};\n`);
  server = sharedDevServer();
});
afterAll(async () => {
  cleanupTempDirs();
});

function waymark(args: string[], env: Record<string, string> = {}) {
  const run = spawnSync(SYSTEM_NODE, [BIN, ...args], {
    encoding: "utf8",
    env: { ...(process.env as Record<string, string>), XDG_CACHE_HOME: cacheHome, WAYMARK_TOKEN: server.token, ...env },
  });
  return { code: run.status, stdout: run.stdout, stderr: run.stderr };
}

/** The owner's feedback, posted from the owner view's form with a signed-in session. */
async function giveFeedback(workflowId: string, target: string, verdict: string, body: string): Promise<void> {
  const login = await fetch(`${server.url}/login`, {
    method: "POST",
    headers: { "Content-Type": "application/x-www-form-urlencoded", Origin: server.url },
    body: new URLSearchParams({ token: server.token }).toString(),
    redirect: "manual",
  });
  const cookie = (login.headers.get("Set-Cookie") ?? "").split(";")[0] ?? "";
  const response = await fetch(`${server.url}/w/${workflowId}/feedback`, {
    method: "POST",
    headers: { "Content-Type": "application/x-www-form-urlencoded", Origin: server.url, Cookie: cookie },
    body: new URLSearchParams({ target, verdict, body }).toString(),
    redirect: "manual",
  });
  expect(response.status, await response.text()).toBe(303);
}

function numstat(left: string, right: string): string {
  const run = spawnSync("git", ["diff", "--no-index", "--numstat", "--", left, right], { encoding: "utf8" });
  const [added = "", removed = ""] = run.stdout.split("\t");
  return added === "-" ? "binary" : `${added} ${removed}`;
}

describe("wrangler dev + helper: line counts, commits with the task trailer, summary, verify", () => {
  it("measures a real task, ties its commit to it, prints the PR summary and verifies the export", async () => {
    const repo = Repo.init()
      .write("a.ts", Array.from({ length: 10 }, (_, i) => `a${i}\n`).join(""))
      .write("dirty.ts", "d1\nd2\n")
      .write("old.md", "moved content\n")
      .commitAll("initial");
    const env = { XDG_CACHE_HOME: cacheHome };
    const init = waymark(["init", "--url", `${server.url}/mcp`, "--agent", "claude", "--dir", repo.dir, "--commit-trailer"]);
    expect(init.code, init.stderr).toBe(0);
    expect(init.stdout).toContain("commit trailer: installed");
    repo.commitAll("waymark setup");
    const startCommit = repo.git("rev-parse", "HEAD").trim();
    repo.write("dirty.ts", "d1\nd2\nbefore the task\n");
    const dirtyAtStart = join(tempDir("waymark-copy-"), "dirty.ts");
    writeFileSync(dirtyAtStart, readFileSync(join(repo.dir, "dirty.ts")));

    const agent = await connectThroughHelper(server, repo.dir, { cacheHome });
    const tool = (name: string, args: Structured) => ok(agent, name, args);
    const wf = (await tool("start_workflow", { name: "Review chain" })) as { workflow_id: string; share_url: string };
    const started = (await tool("start_task", {
      workflow_id: wf.workflow_id,
      name: "Edit",
      goal: "Edit a",
      areas: ["a", "dirty", "old", "new"],
    })) as {
      task_id: string;
    };

    repo.write("a.ts", `${Array.from({ length: 7 }, (_, i) => `a${i}\n`).join("")}new1\nnew2\n`);
    repo.gitWith(env, "commit", "-q", "-am", "Edit a");
    repo.git("mv", "old.md", "new.md");
    repo.gitWith(env, "commit", "-q", "-m", "Move notes");
    repo.write("dirty.ts", "d1\nd2\nbefore the task\nduring 1\nduring 2\n");
    writeFileSync(join(repo.dir, "image.bin"), Buffer.from([0, 1, 2, 0, 3]));
    expect(repo.git("log", "-1", "--format=%B")).toContain(`Waymark-Task: ${started.task_id}`);

    const completed = await callTool(
      agent,
      "complete_task",
      { task_id: started.task_id, status: "success", outcome: { summary: "Edited" } },
      { mustSucceed: true },
    );
    // Compactly in the text the agent reads: totals, commits, branch.
    expect(completed.text).toContain("lines: +4 −3, 1 binary");
    expect(completed.text).toMatch(/commits: [0-9a-f]{7,} Move notes, [0-9a-f]{7,} Edit a \(branch main\)/);
    const done = completed.structured as {
      files_changed: {
        lines: { path: string; added?: number; removed?: number; binary?: true }[];
        commits: { subject: string; task?: string }[];
        branch: string;
      };
    };
    await agent.close();
    // The start copy of dirty.ts (outside the repository) is gone once the task is recorded.
    expect(readdirSync(join(cacheHome, "waymark", "start-contents"))).toEqual([]);
    // So is the scratch repository the lines were counted in, removed after the answer went out.
    expect(readdirSync(join(cacheHome, "waymark", "line-counts")).filter((name) => name.startsWith("waymark-lines-"))).toEqual([]);
    const measured = Object.fromEntries(done.files_changed.lines.map((l) => [l.path, l.binary ? "binary" : `${l.added} ${l.removed}`]));
    const aAtStart = join(tempDir("waymark-copy-"), "a.ts");
    writeFileSync(aAtStart, execFileSync("git", ["show", `${startCommit}:a.ts`], { cwd: repo.dir }));
    expect(measured).toEqual({
      "a.ts": numstat(aAtStart, join(repo.dir, "a.ts")),
      "dirty.ts": numstat(dirtyAtStart, join(repo.dir, "dirty.ts")),
      "image.bin": "binary",
      // A rename pairs identical contents: 0/0, as git diff --numstat with rename detection says.
      "new.md": "0 0",
      "old.md": "0 0",
    });
    expect(measured["dirty.ts"]).toBe("2 0");
    expect(done.files_changed.commits.map((c) => [c.subject, c.task])).toEqual([
      ["Move notes", started.task_id],
      ["Edit a", started.task_id],
    ]);
    expect(done.files_changed.branch).toBe("main");

    // The PR summary from the endpoint, with the share link the helper saw at start_workflow.
    const summary = waymark(["summary", "--url", `${server.url}/mcp`, "--dir", repo.dir]);
    expect(summary.code, summary.stderr).toBe(0);
    expect(summary.stdout).toContain(`[Workflow page](<${wf.share_url}>)`);
    // No hook observed this task, so a.ts's added lines are "not observed" (never anyone's).
    const [aAdded] = measured["a.ts"]?.split(" ") ?? [];
    expect(summary.stdout).toContain(`| M | \`a.ts\` | ${measured["a.ts"]?.replace(" ", " | ")} | committed, not observed ${aAdded} |`);
    expect(summary.stdout).toContain("| R | `old.md` → `new.md` | 0 | 0 | committed |");
    expect(summary.stdout).toContain("| A | `image.bin` | binary |  | uncommitted, **⚠ outside declared areas** |");
    const exported = await (await fetch(`${wf.share_url}/export.md`)).text();
    // Both end with one line on how to check the signed JSON export, naming the current key.
    expect(summary.stdout.replace(/\n\[Workflow page\]\(<[^>]+>\)\n/, "")).toBe(exported);
    const statementLine = exported.split(/\n(?=<sub>The JSON export of this record)/)[1];
    expect(statementLine).toMatch(/^<sub>The JSON export of this record carries a statement signed with key `[\w-]{43}`/);

    // The JSON export verifies offline, and every kind of tampering is named.
    const dir = tempDir("waymark-export-");
    const json = JSON.parse(await (await fetch(`${wf.share_url}/export.json`)).text()) as {
      events: { seq: number; type: string; data: Record<string, unknown> }[];
      chain: { head: string };
    };
    const check = (name: string, value: unknown) => {
      const file = join(dir, name);
      writeFileSync(file, typeof value === "string" ? value : JSON.stringify(value));
      return waymark(["verify", file, "--allow-unsigned"]);
    };
    const intact = check("intact.json", json);
    expect(intact.code, intact.stderr).toBe(0);
    expect(intact.stdout).toContain(`${json.events.length} events, chain head ${json.chain.head}`);
    expect(intact.stdout).toContain("NOT CHECKED (accepted with --allow-unsigned): nothing wrong was found in what was checked");

    const altered = structuredClone(json);
    (altered.events[2] as { data: Record<string, unknown> }).data.name = "Something else";
    expect(check("altered.json", altered)).toMatchObject({ code: 1, stderr: expect.stringContaining("event 3 (") });
    expect(check("altered.json", altered).stderr).toContain("was altered");

    const removed = structuredClone(json);
    removed.events.splice(1, 1);
    expect(check("removed.json", removed)).toMatchObject({ code: 1, stderr: expect.stringContaining("event 2 is missing") });

    const truncated = structuredClone(json);
    truncated.events.pop();
    expect(check("truncated.json", truncated)).toMatchObject({
      code: 1,
      stderr: expect.stringContaining("events were removed from its end"),
    });

    const newHead = structuredClone(json);
    newHead.chain.head = "f".repeat(64);
    expect(check("head.json", newHead)).toMatchObject({ code: 1, stderr: expect.stringContaining("chain.head: export says") });

    expect(check("not-json.json", "{").code).toBe(2);
    expect(check("other.json", { hello: 1 }).code).toBe(2);
    expect(waymark(["verify"]).code).toBe(2);

    // The owner rotates the share link and answers on the page: the summary links the new link
    // (the one the helper saw at start_workflow is dead now) and carries the feedback, as the export does.
    const rotated = await fetch(`${server.url}/api/workflows/${wf.workflow_id}/share`, {
      method: "POST",
      headers: { Authorization: `Bearer ${server.token}`, "Content-Type": "application/json" },
      body: JSON.stringify({ action: "rotate" }),
    });
    expect(rotated.status, await rotated.clone().text()).toBe(200);
    const newLink = ((await rotated.json()) as { share_url: string }).share_url;
    expect(newLink).not.toBe(wf.share_url);
    expect((await fetch(wf.share_url)).status).toBe(404);
    await giveFeedback(wf.workflow_id, `task:${started.task_id}`, "changes_requested", "Split the rename into its own commit");
    const again = waymark(["summary", "--url", `${server.url}/mcp`, "--dir", repo.dir]);
    expect(again.code, again.stderr).toBe(0);
    expect(again.stdout).toContain(`[Workflow page](<${newLink}>)`);
    expect(again.stdout).not.toContain(wf.share_url);
    expect(again.stdout).toContain("### Reviewer feedback");
    expect(again.stdout).toContain("Split the rename into its own commit");
    const exportedNow = await (await fetch(`${newLink}/export.md`)).text();
    expect(again.stdout.replace(`\n[Workflow page](<${newLink}>)\n`, "")).toBe(exportedNow);
    // Revoked: no link at all, and the reason on stderr (stdout stays the Markdown).
    await fetch(`${server.url}/api/workflows/${wf.workflow_id}/share`, {
      method: "POST",
      headers: { Authorization: `Bearer ${server.token}`, "Content-Type": "application/json" },
      body: JSON.stringify({ action: "revoke" }),
    });
    const revoked = waymark(["summary", "--url", `${server.url}/mcp`, "--dir", repo.dir]);
    expect(revoked.code, revoked.stderr).toBe(0);
    expect(revoked.stdout).not.toContain("[Workflow page]");
    expect(revoked.stdout).toContain("Split the rename into its own commit");
    expect(revoked.stderr).toContain("no page link: the workflow's share link is revoked");
  });

  it("counts right whatever the previous task needed: the git processes started ahead follow the last task, a miss starts them on demand", async () => {
    const lines = (n: number, tag: string) => Array.from({ length: n }, (_, i) => (i % 3 === 2 ? "}\n" : `${tag}${i}\n`)).join("");
    const plain = (n: number, tag: string) => Array.from({ length: n }, (_, i) => `${tag}${i}\n`).join("");
    const repo = Repo.init().write("a.ts", lines(12, "a")).write("b.ts", lines(6, "b")).commitAll("initial");
    const agent = await connectThroughHelper(server, repo.dir, { cacheHome });
    const tool = (name: string, args: Structured) => ok(agent, name, args);
    const wf = (await tool("start_workflow", { name: "Counts after counts" })) as { workflow_id: string };
    const measure = async (edit: () => void) => {
      const atStart = tempDir("waymark-copy-");
      for (const name of ["a.ts", "b.ts"]) writeFileSync(join(atStart, name), readFileSync(join(repo.dir, name)));
      const { task_id } = (await tool("start_task", { workflow_id: wf.workflow_id, name: "T", goal: "g", areas: ["*.ts"] })) as {
        task_id: string;
      };
      edit();
      const done = (await tool("complete_task", { task_id, status: "success", outcome: { summary: "s" } })) as {
        files_changed: { lines: { path: string; added?: number; removed?: number }[] };
      };
      const measured = Object.fromEntries(done.files_changed.lines.map((l) => [l.path, `${l.added} ${l.removed}`]));
      const expected = Object.fromEntries(Object.keys(measured).map((path) => [path, numstat(join(atStart, path), join(repo.dir, path))]));
      return { measured, expected };
    };
    // b.ts dirty at start (its start content kept) and rewritten with no line in common: counted in
    // the helper, no git process needed; then edits that share lines ("}") with files in HEAD need
    // the object database and the scratch repository, not started ahead after the first task.
    repo.write("b.ts", plain(6, "B"));
    const steps = [
      () => repo.write("b.ts", plain(5, "c")),
      () => repo.write("a.ts", lines(12, "a").replace("a0\n", "x0\n").replace("a10\n", "x10\n")),
      () => repo.write("a.ts", lines(14, "a").replace("a3\n", "y3\n")),
      () => repo.write("b.ts", plain(5, "c").replace("c2\n", "d2\n")),
    ];
    const results = [];
    for (const step of steps) results.push(await measure(step));
    await agent.close();
    for (const { measured, expected } of results) expect(measured).toEqual(expected);
    expect(results.map((r) => Object.keys(r.measured))).toEqual([["b.ts"], ["a.ts"], ["a.ts"], ["b.ts"]]);
    expect(readdirSync(join(cacheHome, "waymark", "line-counts")).filter((name) => name.startsWith("waymark-lines-"))).toEqual([]);
  });
});
