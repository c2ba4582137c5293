/**
 * What the MCP proxy keeps between tool calls (a repository's inert git context while its config
 * files are unchanged, the index's hidden entries while the index is unchanged) and how a change
 * is picked up: real repositories, real git, an agent editing .git between calls.
 */
import { chmodSync, existsSync, rmSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { eventually } from "../../test/support/eventually.js";
import { InertContexts } from "../src/config-cache.js";
import { RACY_MS } from "../src/file-stamp.js";
import { inertContext, plainContext } from "../src/git/inert-config.js";
import type { GitContext } from "../src/git/process.js";
import { gitHiddenEntries, gitToplevel } from "../src/git/queries.js";
import { computeChanges, takeSnapshot } from "../src/snapshot.js";
import { cleanupTempDirs, Repo, tempDir } from "./fixtures.js";

afterAll(cleanupTempDirs);

/** Ten seconds from now: files written by the test are past the racy window (git's racily-clean rule). */
const later = () => Date.now() + 10_000;

/** Where git finds the repository of `dir`, as the proxy asks it (`git rev-parse`). */
async function found(dir: string) {
  const where = await gitToplevel(plainContext(dir));
  if (!where) throw new Error(`${dir} is not in a repository`);
  return where;
}

function override(context: GitContext, key: string): string | undefined {
  const count = Number(context.env.GIT_CONFIG_COUNT ?? 0);
  for (let index = 0; index < count; index++) {
    if (context.env[`GIT_CONFIG_KEY_${index}`] === key) return context.env[`GIT_CONFIG_VALUE_${index}`];
  }
  return undefined;
}

/** A script that leaves a marker when git runs it as a clean filter (and passes the content through). */
function trap(): { script: string; marker: string } {
  const marker = join(tempDir(), "ran");
  const script = join(tempDir(), "trap.sh");
  writeFileSync(script, `#!/bin/sh\necho ran >> '${marker}'\ncat\n`);
  chmodSync(script, 0o755);
  return { script, marker };
}

describe("InertContexts", () => {
  it("reuses a context while the config is unchanged; a filter an agent adds between two calls is overridden in the next", async () => {
    const repo = Repo.init().write("a.txt", "a\n").write(".gitattributes", "*.txt filter=trap\n").commitAll("base");
    const gitDir = await found(repo.dir);
    const contexts = new InertContexts(process.env, later);
    const first = await contexts.of(repo.dir, gitDir);
    expect(await contexts.of(repo.dir, gitDir)).toBe(first);
    const start = await takeSnapshot(repo.dir, { context: contexts.of(repo.dir, gitDir) });

    // The agent, between start_task and complete_task: a clean filter in .git/config, and an edit it would run on.
    const { script, marker } = trap();
    repo.git("config", "filter.trap.clean", script);
    repo.write("a.txt", "edited\n");
    const next = await contexts.of(repo.dir, gitDir);
    expect(next).not.toBe(first);
    expect(override(next, "filter.trap.clean")).toBe("");
    const changes = await computeChanges(start, { context: contexts.of(repo.dir, gitDir) });
    expect(changes.type).toBe("git");
    expect(existsSync(marker)).toBe(false);
  });

  it("reads again when the config changes or a config file appears (config.worktree)", async () => {
    const repo = Repo.init();
    const gitDir = await found(repo.dir);
    const contexts = new InertContexts(process.env, later);
    const first = await contexts.of(repo.dir, gitDir);
    repo.git("config", "extensions.worktreeConfig", "true");
    const second = await contexts.of(repo.dir, gitDir);
    expect(second).not.toBe(first);
    expect(await contexts.of(repo.dir, gitDir)).toBe(second);
    writeFileSync(join(gitDir.gitDir, "config.worktree"), "[core]\n\tpager = /bin/sh\n");
    const third = await contexts.of(repo.dir, gitDir);
    expect(third).not.toBe(second);
    expect(override(third, "core.pager")).toBe("");
  });

  it("never keeps a config that includes another file: a filter added to the included file is overridden", async () => {
    const repo = Repo.init();
    const gitDir = await found(repo.dir);
    const included = join(tempDir(), "included.config");
    writeFileSync(included, "[user]\n\tname = x\n");
    repo.git("config", "include.path", included);
    const contexts = new InertContexts(process.env, later);
    const first = await contexts.of(repo.dir, gitDir);
    expect(await contexts.of(repo.dir, gitDir)).not.toBe(first);
    writeFileSync(included, '[filter "trap"]\n\tclean = /bin/sh\n');
    expect(override(await contexts.of(repo.dir, gitDir), "filter.trap.clean")).toBe("");
  });

  it("never keeps a read of a config file changed within the racy window (same-tick edits would not show)", async () => {
    const repo = Repo.init();
    const gitDir = await found(repo.dir);
    const contexts = new InertContexts();
    repo.git("config", "user.name", "just now");
    const first = await contexts.of(repo.dir, gitDir);
    expect(await contexts.of(repo.dir, gitDir)).not.toBe(first);
  });

  it("knows where the repository is without git while its .git is the same; a repository made anew there is read again", async () => {
    const repo = Repo.init().write("a.txt", "a\n").commitAll("base");
    const contexts = new InertContexts(process.env, later);
    expect(contexts.kept(repo.dir)).toBeNull();
    const where = await found(repo.dir);
    const first = await contexts.of(repo.dir, where);
    expect(contexts.kept(repo.dir)).toEqual({ ...where, context: first });
    // Another repository in its place, with a clean filter in its config (an agent can do this between calls).
    rmSync(join(repo.dir, ".git"), { recursive: true, force: true });
    repo.git("init", "-q", "-b", "main");
    repo.git("config", "filter.trap.clean", "/bin/sh");
    expect(contexts.kept(repo.dir)).toBeNull();
    expect(override(await contexts.of(repo.dir, await found(repo.dir)), "filter.trap.clean")).toBe("");
  });

  it("keeps a linked worktree's place while its gitfile is unchanged; a subdirectory always asks git", async () => {
    const repo = Repo.init().write("a.txt", "a\n").write("sub/b.txt", "b\n").commitAll("base");
    const worktree = join(tempDir(), "linked");
    repo.git("worktree", "add", "-q", worktree);
    const contexts = new InertContexts(process.env, later);
    const where = await found(worktree);
    expect(where.gitDir).toContain(join(".git", "worktrees"));
    const context = await contexts.of(worktree, where);
    expect(contexts.kept(worktree)?.context).toBe(context);
    // The main repository's config is the worktree's too.
    repo.git("config", "core.pager", "/bin/sh");
    expect(contexts.kept(worktree)).toBeNull();
    expect(override(await contexts.of(worktree, where), "core.pager")).toBe("");
    const sub = join(repo.dir, "sub");
    await contexts.of(sub, await found(sub));
    expect(contexts.kept(sub)).toBeNull();
  });
});

describe("hidden index entries kept between tool calls", () => {
  it("lists them again once the index changed: an edit hidden with --assume-unchanged after a first call is still seen", async () => {
    const repo = Repo.init().write("a.txt", "a\n").write("b.txt", "b\n").commitAll("base");
    const context = await inertContext(repo.dir);
    const indexFile = join(repo.dir, ".git", "index");
    // Past the racy window: the listing of an index written this instant is never kept.
    await eventually(
      "the index older than the racy window",
      async () => (Date.now() - Math.max(statSync(indexFile).mtimeMs, statSync(indexFile).ctimeMs) > RACY_MS ? true : null),
      RACY_MS + 5_000,
      10,
    );
    const first = await gitHiddenEntries(context, indexFile);
    expect(first).toEqual([]);
    expect(await gitHiddenEntries(context, indexFile)).toBe(first);
    repo.git("update-index", "--assume-unchanged", "a.txt");
    repo.write("a.txt", "an edit git status will not report\n");
    expect((await gitHiddenEntries(context, indexFile)).map((entry) => [entry.path, entry.flag])).toEqual([["a.txt", "assume-unchanged"]]);
    const snapshot = await takeSnapshot(repo.dir, { context: Promise.resolve(context) });
    expect(snapshot.type === "git" && snapshot.dirty.map((entry) => entry.path)).toEqual(["a.txt"]);
  });
});
