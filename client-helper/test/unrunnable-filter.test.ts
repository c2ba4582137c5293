import { existsSync, readFileSync, utimesSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { changesSchema, snapshotSchema } from "@waymark/protocol/wire";
import { afterAll, describe, expect, it } from "vitest";
import { resolveChanges } from "../src/cli.js";
import { outgoingChanges, outgoingSnapshot } from "../src/outgoing.js";
import { computeChanges, takeSnapshot } from "../src/snapshot.js";
import { cleanupTempDirs, Repo, tempDir } from "./fixtures.js";

// An LFS-like clean filter defined in the repository's own config: the agent's git runs it when it
// commits, the helper never does (it runs nothing a repository defines). Its ids for such files
// are of the bytes on disk, git's are of the filter's output: where the two cannot be compared,
// the bytes on disk at the start and at the end are, and where neither can be, the record says
// the change was not observed.

afterAll(cleanupTempDirs);

/** A repository whose `*.bin` files go through a pointer-making clean filter set in .git/config. */
function lfsLikeRepository(): { repo: Repo; agentEnv: NodeJS.ProcessEnv; helperRan: string } {
  const scripts = tempDir("waymark-filter-");
  const helperRan = join(scripts, "helper-ran");
  const clean = join(scripts, "clean.sh");
  // The agent's git sets AGENT_GIT; a run without it is the helper running the filter, which it must never do.
  writeFileSync(
    clean,
    `#!/bin/sh\n[ -n "$AGENT_GIT" ] || echo ran >> '${helperRan}'\nprintf 'version https://git-lfs.github.com/spec/v1\\noid sha256:%s\\n' "$(sha256sum | cut -d' ' -f1)"\n`,
    { mode: 0o755 },
  );
  const repo = Repo.init();
  repo.git("config", "filter.pointer.clean", clean);
  repo.git("config", "filter.pointer.smudge", "cat");
  repo.git("config", "filter.pointer.required", "true");
  const agentEnv = { AGENT_GIT: "1" };
  repo.write(".gitattributes", "*.bin filter=pointer\n").write("a.bin", "large content\n").write("clean.bin", "left alone\n");
  repo.gitWith(agentEnv, "add", "-A");
  repo.gitWith(agentEnv, "commit", "-q", "-m", "base");
  settle(repo, agentEnv, "a.bin", "clean.bin");
  return { repo, agentEnv, helperRan };
}

/**
 * Moves files' times into the past and lets the agent's git refresh its index: its entries are
 * then not racily clean, so git trusts their stat data (as it does for files written a while ago).
 */
function settle(repo: Repo, agentEnv: NodeJS.ProcessEnv, ...paths: string[]): void {
  const past = new Date(Date.now() - 60_000);
  for (const path of paths) utimesSync(join(repo.dir, path), past, past);
  repo.gitWith(agentEnv, "update-index", "-q", "--refresh");
}

/** One task: what the helper sends, validated by the edge's schemas, resolved by the shared rule. */
async function observe(repo: Repo, during: () => void): Promise<{ listed: string[]; warnings: string[] }> {
  const local = await takeSnapshot(repo.dir);
  const start = snapshotSchema.parse(JSON.parse(JSON.stringify(outgoingSnapshot(local))));
  during();
  const changes = changesSchema.parse(JSON.parse(JSON.stringify(outgoingChanges(local, await computeChanges(local)))));
  const resolved = resolveChanges(start, changes);
  return {
    listed: resolved.files.map((file) => `${file.status} ${file.path}`),
    warnings: "warnings" in changes ? (changes.warnings ?? []) : [],
  };
}

describe("a clean filter the helper does not run (defined in the repository's config)", () => {
  it("a file dirty at the start and an untracked one, both committed unchanged, are not changes of the task", async () => {
    const { repo, agentEnv, helperRan } = lfsLikeRepository();
    repo.write("a.bin", "dirty at start\n").write("new.bin", "untracked at start\n");
    settle(repo, agentEnv, "a.bin", "new.bin");
    const { listed } = await observe(repo, () => {
      repo.gitWith(agentEnv, "add", "a.bin", "new.bin");
      repo.gitWith(agentEnv, "commit", "-q", "-m", "as they were");
    });
    expect(listed).toEqual([]);
    expect(existsSync(helperRan) ? readFileSync(helperRan, "utf8") : "").toBe("");
  });

  it("the same files changed during the task are still changes (committed or not)", async () => {
    const { repo, agentEnv, helperRan } = lfsLikeRepository();
    repo.write("a.bin", "dirty at start\n").write("new.bin", "untracked at start\n").write("b.bin", "untracked, edited\n");
    settle(repo, agentEnv, "a.bin", "new.bin", "b.bin");
    const { listed } = await observe(repo, () => {
      repo.write("a.bin", "edited during the task\n").write("new.bin", "edited too\n").write("b.bin", "edited, not committed\n");
      settle(repo, agentEnv, "a.bin", "new.bin", "b.bin");
      repo.gitWith(agentEnv, "add", "a.bin", "new.bin");
      repo.gitWith(agentEnv, "commit", "-q", "-m", "edited");
    });
    // Files present at the start (dirty or untracked) and changed since are modified ones.
    expect(listed).toEqual(["M a.bin", "M b.bin", "M new.bin"]);
    expect(existsSync(helperRan) ? readFileSync(helperRan, "utf8") : "").toBe("");
  });

  it("a file clean at the start and different on disk at the end: listed, and its change said to be not observed", async () => {
    const { repo, helperRan } = lfsLikeRepository();
    const { listed, warnings } = await observe(repo, () => {
      // Rewritten with the same bytes: only its stat data moved, which git cannot tell from an edit without the filter.
      repo.write("clean.bin", "left alone\n");
    });
    expect(listed).toEqual(["M clean.bin"]);
    expect(warnings.join("\n")).toMatch(/clean\.bin.*not observed|not observed.*clean\.bin/s);
    expect(existsSync(helperRan) ? readFileSync(helperRan, "utf8") : "").toBe("");
  });
});
