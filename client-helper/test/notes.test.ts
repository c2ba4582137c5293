import { spawn, spawnSync } from "node:child_process";
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { mergeNote, NOTES_REF, parseNote, type TaskNote } from "@waymark/protocol/git-note";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { inertContext } from "../src/git/inert-config.js";
import { checkNotes } from "../src/notes/setup.js";
import { readNotes, writeNotes } from "../src/notes/store.js";
import { cleanupTempDirs, Repo, tempDir } from "./fixtures.js";
import { BIN, ensureBuilt, SYSTEM_NODE } from "./support.js";

// The one write the helper makes to a repository: its notes under refs/notes/waymark. Real git
// repositories: nothing else moves (index, HEAD, other refs, stash, status), nothing the repository
// defines runs (hooks, fsmonitor), concurrent writers (other helpers, `git notes`, a commit loop)
// lose nothing, remote-tracking copies are merged so a push fast-forwards; and the config `waymark
// init` sets so notes follow rewrites and fetches, which `--remove` takes out again.

beforeAll(() => ensureBuilt());
afterAll(cleanupTempDirs);

/** A valid entry of one task about `commit` (the record's only range: line 1 of a.txt). */
function entry(commit: string, task = "wf_1.t1"): TaskNote {
  return {
    type: "waymark.task-note",
    version: 1,
    commit,
    workflow_id: "wf_1",
    task_id: task,
    origin: "https://waymark.example.com",
    task: { start_commit: null, end_commit: commit, commits: [commit] },
    record: {
      version: "0.1.0",
      id: "550e8400-e29b-41d4-a716-446655440000",
      timestamp: "2026-11-27T10:00:00Z",
      vcs: { type: "git", revision: commit },
      files: [{ path: "a.txt", conversations: [{ contributor: { type: "ai" }, ranges: [{ start_line: 1, end_line: 1 }] }] }],
      metadata: { "dev.waymark": { record_per: "task", workflow_id: "wf_1", task_id: task, task_name: "T" } },
    },
  };
}

type State = { index: Buffer; indexMtime: number; head: string; refs: string; stash: string; status: string };

function observe(repo: Repo): State {
  const index = join(repo.dir, ".git", "index");
  return {
    index: readFileSync(index),
    indexMtime: statSync(index).mtimeMs,
    head: readFileSync(join(repo.dir, ".git", "HEAD"), "utf8") + repo.git("rev-parse", "HEAD"),
    refs: repo
      .git("for-each-ref", "--format=%(refname) %(objectname)")
      .split("\n")
      .filter((line) => !line.startsWith(`${NOTES_REF} `))
      .join("\n"),
    stash: repo.git("stash", "list"),
    // Observing must not itself run the repository's fsmonitor.
    status: repo.git("-c", "core.fsmonitor=false", "--no-optional-locks", "status", "--porcelain=v2", "-z", "-uall", "--branch"),
  };
}

function commits(repo: Repo, n: number): string[] {
  const out: string[] = [];
  for (let i = 0; i < n; i++) out.push(repo.write("a.txt", `v${i}\n`).commitAll(`c${i}`).git("rev-parse", "HEAD").trim());
  return out;
}

describe("writing notes", () => {
  it("moves nothing but refs/notes/waymark, and runs nothing the repository defines", async () => {
    const repo = Repo.init();
    const [commit] = commits(repo, 1) as [string];
    repo.write("stashed.txt", "s\n").git("add", "stashed.txt");
    repo.git("stash", "push", "-q");
    repo.write("a.txt", "dirty\n").write("untracked.txt", "u\n");
    // Hooks and an fsmonitor the repository defines: each would leave a file behind if it ran.
    const ran = tempDir("waymark-ran-");
    const hooks = join(repo.dir, ".git", "hooks");
    for (const hook of ["reference-transaction", "post-commit", "pre-commit"])
      writeFileSync(join(hooks, hook), `#!/bin/sh\ntouch ${join(ran, hook)}\n`, { mode: 0o755 });
    const custom = tempDir("waymark-hooks-");
    writeFileSync(join(custom, "reference-transaction"), `#!/bin/sh\ntouch ${join(ran, "custom")}\n`, { mode: 0o755 });
    repo.git("config", "core.hooksPath", custom);
    writeFileSync(join(ran, "..", "fsmonitor.sh"), `#!/bin/sh\ntouch ${join(ran, "fsmonitor")}\n`, { mode: 0o755 });
    repo.git("config", "core.fsmonitor", join(ran, "..", "fsmonitor.sh"));
    const before = observe(repo);
    const context = await inertContext(repo.dir);
    await writeNotes(context, [entry(commit)]);
    expect(readdirSync(ran)).toEqual([]);
    expect(observe(repo)).toEqual(before);
    // git itself reads the note; the entry is one line of JSON.
    const shown = repo.git("notes", `--ref=${NOTES_REF}`, "show", commit);
    expect(parseNote(shown).entries.map((e) => e.task_id)).toEqual(["wf_1.t1"]);
    expect(shown.trim().split("\n")).toHaveLength(1);
    // Its notes commit names no one's identity but its own, and is not signed.
    expect(repo.git("log", "-1", "--format=%an <%ae> %G?", NOTES_REF).trim()).toBe("waymark <waymark@localhost> N");
  });

  it("keeps other tasks' entries and lines of later versions; replaces only its own task's entry for the commit", async () => {
    const repo = Repo.init();
    const [commit] = commits(repo, 1) as [string];
    const future = JSON.stringify({ type: "waymark.task-note", version: 2, commit, anything: "new" });
    repo.git("notes", `--ref=${NOTES_REF}`, "add", "-m", future, commit);
    const context = await inertContext(repo.dir);
    await writeNotes(context, [entry(commit, "wf_1.t1")]);
    await writeNotes(context, [entry(commit, "wf_1.t2")]);
    const changed = entry(commit, "wf_1.t1");
    (changed.record as { timestamp: string }).timestamp = "2026-11-28T10:00:00Z";
    await writeNotes(context, [changed]);
    const note = repo.git("notes", `--ref=${NOTES_REF}`, "show", commit);
    const parsed = parseNote(note);
    expect(parsed.entries.map((e) => `${e.task_id} ${(e.record as { timestamp: string }).timestamp}`).sort()).toEqual([
      "wf_1.t1 2026-11-28T10:00:00Z",
      "wf_1.t2 2026-11-27T10:00:00Z",
    ]);
    expect(parsed.skipped).toEqual([{ line: future, reason: "version: 2 is not 1 (a later format)" }]);
    // git's own concatenation of two notes (a rebase squashing two commits) still reads as entries.
    expect(parseNote(`${note}\n${note}`).entries).toHaveLength(4);
    expect(mergeNote(note, []).split("\n").filter(Boolean)).toHaveLength(3);
  });

  it("finds its place in a notes tree git fanned out, and git still reads every note", async () => {
    const repo = Repo.init();
    // 300 commits and a note on all but the last, in one fast-import (which fans the notes tree out as git notes does).
    const stream: string[] = [];
    for (let i = 1; i <= 300; i++)
      stream.push(
        `commit refs/heads/main\nmark :${i}\ncommitter T <t@example.com> ${1_700_000_000 + i} +0000\ndata 2\nc\nM 100644 inline a.txt\ndata ${String(i).length + 1}\n${i}\n\n`,
      );
    for (let i = 1; i < 300; i++)
      stream.push(
        `commit ${NOTES_REF}\ncommitter T <t@example.com> ${1_700_000_000 + i} +0000\ndata 1\nn\n${i > 1 ? "" : ""}N inline :${i}\ndata ${`plain ${i}`.length}\nplain ${i}\n\n`,
      );
    spawnSync("git", ["fast-import", "--quiet"], { cwd: repo.dir, input: stream.join("") });
    repo.git("reset", "-q", "--hard", "main");
    const all = repo.git("rev-list", "--reverse", "main").trim().split("\n");
    expect(repo.git("ls-tree", NOTES_REF).split("\n")[0]).toMatch(/^040000 tree/);
    const context = await inertContext(repo.dir);
    const last = all[299] as string;
    const first = all[0] as string;
    await writeNotes(context, [entry(last), entry(first)]);
    expect(parseNote(repo.git("notes", `--ref=${NOTES_REF}`, "show", last)).entries).toHaveLength(1);
    const replaced = repo.git("notes", `--ref=${NOTES_REF}`, "show", first);
    expect(replaced).toContain("plain 1\n");
    expect(parseNote(replaced).entries).toHaveLength(1);
    expect(repo.git("notes", `--ref=${NOTES_REF}`, "show", all[150] as string).trim()).toBe("plain 151");
    expect((await readNotes(context)).byCommit.get(last)?.entries).toHaveLength(1);
  });

  it("loses nothing to concurrent writers: another process writing the ref as the helper does, and a commit loop", async () => {
    const repo = Repo.init();
    const targets = commits(repo, 24);
    // Another writer in another process, as a second helper writes: build on the ref as read, move it
    // only from that value (update-ref's old value), read again when it moved meanwhile.
    const writer = [
      "set -e",
      `export GIT_INDEX_FILE="${join(tempDir("waymark-other-"), "index")}"`,
      `for c in ${targets.slice(16).join(" ")}; do`,
      "  while :; do",
      "    old=$(git rev-parse -q --verify refs/notes/waymark || true)",
      '    if [ -n "$old" ]; then git read-tree "$old^{tree}"; parent="-p $old"; else git read-tree --empty; parent=""; old=0000000000000000000000000000000000000000; fi',
      '    blob=$(echo "by another $c" | git hash-object -w --stdin)',
      '    git update-index --add --cacheinfo "100644,$blob,$c"',
      "    tree=$(git write-tree)",
      '    new=$(git commit-tree "$tree" $parent -m other)',
      '    if git update-ref refs/notes/waymark "$new" "$old" 2>/dev/null; then break; fi',
      "  done",
      "done",
    ].join("\n");
    const loop = "set -e\nfor i in $(seq 1 30); do echo $i > loop.txt; git add loop.txt; git commit -q -m loop$i; done";
    const run = (script: string) => {
      const child = spawn("bash", ["-c", script], { cwd: repo.dir, stdio: ["ignore", "ignore", "pipe"] });
      let stderr = "";
      child.stderr.on("data", (chunk: Buffer) => {
        stderr += chunk.toString();
      });
      return new Promise<{ code: number | null; stderr: string }>((resolve) => child.on("close", (code) => resolve({ code, stderr })));
    };
    const others = [run(writer), run(loop)];
    const context = await inertContext(repo.dir);
    await Promise.all(targets.slice(0, 16).map((commit) => writeNotes(context, [entry(commit)])));
    for (const other of await Promise.all(others)) {
      expect(other.code, other.stderr).toBe(0);
      expect(other.stderr).not.toMatch(/index\.lock/);
    }
    const read = await readNotes(context);
    for (const commit of targets.slice(0, 16)) expect(read.byCommit.get(commit)?.entries, commit).toHaveLength(1);
    for (const commit of targets.slice(16)) expect(repo.git("notes", "--ref=waymark", "show", commit).trim()).toBe(`by another ${commit}`);
  });

  it("merges the remote's notes it has fetched, so pushing its own is a fast-forward", async () => {
    const origin = tempDir("waymark-origin-");
    spawnSync("git", ["init", "-q", "--bare", origin]);
    const mine = Repo.init();
    const [a, b] = commits(mine, 2) as [string, string];
    mine.git("remote", "add", "origin", origin);
    mine.git("push", "-q", "origin", "main");
    // Someone else (CI carrying a merge) pushed notes first.
    const theirs = new Repo(join(tempDir("waymark-theirs-"), "c"));
    spawnSync("git", ["clone", "-q", origin, theirs.dir]);
    const theirContext = await inertContext(theirs.dir);
    await writeNotes(theirContext, [entry(a, "wf_1.ci")]);
    theirs.git("push", "-q", "origin", NOTES_REF);
    // Here: our own note, written before we fetched theirs, then theirs fetched as init's refspec fetches it.
    const context = await inertContext(mine.dir);
    await writeNotes(context, [entry(b, "wf_1.mine")]);
    const run = spawnSync(SYSTEM_NODE, [BIN, "notes", "setup"], { cwd: mine.dir, encoding: "utf8" });
    expect(run.status, run.stderr).toBe(0);
    mine.git("fetch", "-q", "origin");
    expect(mine.git("for-each-ref", "--format=%(refname)", "refs/notes/")).toContain("refs/notes/remotes/origin/waymark");
    // Readers see both already; the next write merges theirs into ours.
    expect([...(await readNotes(context)).byCommit.keys()].sort()).toEqual([a, b].sort());
    await writeNotes(context, [entry(b, "wf_1.mine2")]);
    mine.git("push", "-q", "origin", NOTES_REF);
    const pushed = parseNote(
      spawnSync("git", ["--git-dir", origin, "notes", `--ref=${NOTES_REF}`, "show", a], { encoding: "utf8" }).stdout,
    );
    expect(pushed.entries.map((e) => e.task_id)).toEqual(["wf_1.ci"]);
  });
});

describe("the repository's config for its notes", () => {
  it("init sets what makes notes follow rewrites and fetches, doctor checks it, --remove takes it out", async () => {
    const repo = Repo.init();
    commits(repo, 1);
    repo.git("remote", "add", "origin", "https://example.com/app.git");
    repo.git("config", "--add", "notes.rewriteRef", "refs/notes/commits");
    const config = join(repo.dir, ".git", "config");
    const home = tempDir("waymark-home-");
    const env = { ...process.env, HOME: home, XDG_CONFIG_HOME: join(home, ".config"), XDG_CACHE_HOME: tempDir("waymark-cache-") };
    expect((await checkNotes(repo.dir)).filter((check) => !check.ok).map((check) => check.detail)).toEqual([
      `notes.rewriteRef does not name ${NOTES_REF}: an amend or a rebase leaves the task records on the old commits`,
      "fetching from origin does not bring the task records",
    ]);
    const init = spawnSync(SYSTEM_NODE, [BIN, "init", "--url", "https://waymark.example.com", "--agent", "claude"], {
      cwd: repo.dir,
      encoding: "utf8",
      env,
    });
    expect(init.status, init.stderr).toBe(0);
    expect(init.stdout).toContain(
      "Notes: set in the repository's config: notes.rewriteRef refs/notes/waymark; remote.origin.fetch +refs/notes/waymark*:refs/notes/remotes/origin/waymark*",
    );
    expect(repo.git("config", "--get-all", "notes.rewriteRef").trim().split("\n")).toEqual(["refs/notes/commits", NOTES_REF]);
    expect((await checkNotes(repo.dir)).every((check) => check.ok)).toBe(true);
    // A second run changes nothing.
    const again = spawnSync(SYSTEM_NODE, [BIN, "notes", "setup"], { cwd: repo.dir, encoding: "utf8", env });
    expect(again.stdout).toContain("Notes: already set up");
    // An amend now copies the note.
    const head = repo.git("rev-parse", "HEAD").trim();
    await writeNotes(await inertContext(repo.dir), [entry(head)]);
    repo.write("b.txt", "b\n").git("add", "b.txt");
    repo.git("commit", "-q", "--amend", "--no-edit");
    const amended = repo.git("rev-parse", "HEAD").trim();
    expect(parseNote(repo.git("notes", `--ref=${NOTES_REF}`, "show", amended)).entries[0]?.commit).toBe(head);
    const removed = spawnSync(SYSTEM_NODE, [BIN, "init", "--remove", "--agent", "claude"], { cwd: repo.dir, encoding: "utf8", env });
    expect(removed.status, removed.stderr).toBe(0);
    expect(removed.stdout).toContain("Notes: remove from the repository's config");
    expect(repo.git("config", "--get-all", "notes.rewriteRef").trim()).toBe("refs/notes/commits");
    expect(readFileSync(config, "utf8")).not.toContain("waymark");
    expect(existsSync(join(repo.dir, ".git", "refs", "notes")) || repo.git("for-each-ref", NOTES_REF) !== "").toBe(true);
  });
});
