import { appendFileSync, mkdirSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { displayPath } from "@waymark/protocol/paths";
import { type Changes, changesSchema, type Snapshot, snapshotSchema } from "@waymark/protocol/wire";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { resolveChanges } from "../src/cli.js";
import { outgoingChanges, outgoingSnapshot } from "../src/outgoing.js";
import { computeChanges, takeSnapshot } from "../src/snapshot.js";
import { cleanupTempDirs, Repo, tempDir } from "./fixtures.js";

afterAll(cleanupTempDirs);

/** One task in `dir`: what the helper sends, validated by the edge's schemas, resolved by the shared rule. */
async function task(dir: string, during: () => void): Promise<{ listed: string[]; start: Snapshot; changes: Changes }> {
  const local = await takeSnapshot(dir);
  const start = snapshotSchema.parse(JSON.parse(JSON.stringify(outgoingSnapshot(local))));
  during();
  const changes = changesSchema.parse(JSON.parse(JSON.stringify(outgoingChanges(local, await computeChanges(local)))));
  return { listed: resolveChanges(start, changes).files.map((f) => `${f.status} ${displayPath(f.path)}`), start, changes };
}

const latin1 = (name: string) => Buffer.from(name, "latin1");

describe("file names that are not UTF-8 are carried byte for byte", () => {
  it("a modified lat\\xe9.txt is M, not D", async () => {
    const repo = Repo.init().writeBytes(latin1("lat\xe9.txt"), "v1\n").commitAll("base");
    const { listed, changes } = await task(repo.dir, () => repo.writeBytes(latin1("lat\xe9.txt"), "v2\n"));
    expect(listed).toEqual(["M lat\\xE9.txt"]);
    expect(changes.type === "git" && changes.dirty.map((d) => d.path)).toEqual(["/lat%E9.txt"]);
  });

  it("a new such file is A, and one untracked at start and left alone is not listed", async () => {
    const repo = Repo.init().write("a.txt", "a\n").commitAll("base").writeBytes(latin1("old\xff.txt"), "o\n");
    const { listed } = await task(repo.dir, () => repo.writeBytes(latin1("new\xe9.txt"), "n\n"));
    expect(listed).toEqual(["A new\\xE9.txt"]);
  });

  it("two committed together stay two paths and complete", async () => {
    const repo = Repo.init().write("a.txt", "a\n").commitAll("base");
    const { listed } = await task(repo.dir, () => {
      repo.writeBytes(latin1("lat\xe9.txt"), "e9\n").writeBytes(latin1("lat\xe8.txt"), "e8\n");
      repo.commitAll("two latin-1 names");
    });
    expect(listed).toEqual(["A lat\\xE8.txt", "A lat\\xE9.txt"]);
  });

  it("the checksum walk outside git includes them", async () => {
    const dir = tempDir();
    writeFileSync(Buffer.concat([Buffer.from(`${dir}/`), latin1("caf\xe9.txt")]), "1\n");
    const { listed } = await task(dir, () => {
      writeFileSync(Buffer.concat([Buffer.from(`${dir}/`), latin1("caf\xe9.txt")]), "2\n");
      writeFileSync(Buffer.concat([Buffer.from(`${dir}/`), latin1("na\xefve.txt")]), "n\n");
    });
    expect(listed).toEqual(["M caf\\xE9.txt", "A na\\xEFve.txt"]);
  });
});

describe("files git hides from status", () => {
  it.each([
    { flag: "--skip-worktree", case: "skip-worktree" },
    { flag: "--assume-unchanged", case: "assume-unchanged" },
  ])("an edit to a $case file is M", async ({ flag }) => {
    const repo = Repo.init().write("hidden.txt", "h\n").write("a.txt", "a\n").commitAll("base");
    repo.git("update-index", flag, "hidden.txt");
    const { listed } = await task(repo.dir, () => repo.write("hidden.txt", "edited\n"));
    expect(listed).toEqual(["M hidden.txt"]);
  });

  it("an agent hiding its own edit with --assume-unchanged is still seen", async () => {
    const repo = Repo.init().write("a.txt", "a\n").commitAll("base");
    const { listed } = await task(repo.dir, () => {
      repo.write("a.txt", "sneaky\n");
      repo.git("update-index", "--assume-unchanged", "a.txt");
    });
    expect(listed).toEqual(["M a.txt"]);
  });

  it("a hidden file edited before the task and untouched during it is not listed", async () => {
    const repo = Repo.init().write("hidden.txt", "h\n").commitAll("base");
    repo.git("update-index", "--skip-worktree", "hidden.txt");
    repo.write("hidden.txt", "before the task\n");
    const { listed } = await task(repo.dir, () => repo.write("other.txt", "o\n"));
    expect(listed).toEqual(["A other.txt"]);
  });

  it("a new file hidden by editing .git/info/exclude during the task is flagged", async () => {
    const repo = Repo.init().write("a.txt", "a\n").commitAll("base");
    const { listed, changes } = await task(repo.dir, () => {
      repo.write("secret.txt", "hidden\n");
      appendFileSync(join(repo.dir, ".git", "info", "exclude"), "secret.txt\n");
    });
    expect(listed).toEqual([]);
    expect(changes.type !== "unavailable" && changes.warnings?.[0]).toMatch(/ignore rules .*changed during the task/);
  });

  it("ignore rules left alone: no such warning", async () => {
    const repo = Repo.init().write("a.txt", "a\n").commitAll("base");
    const { changes } = await task(repo.dir, () => repo.write("b.txt", "b\n"));
    expect(changes.type !== "unavailable" && changes.warnings).toBeUndefined();
  });

  it("a sparse checkout's absent skip-worktree files are not deletions", async () => {
    const repo = Repo.init().write("in/a.txt", "a\n").write("out/b.txt", "b\n").commitAll("base");
    repo.git("sparse-checkout", "set", "in");
    const { listed } = await task(repo.dir, () => repo.write("in/a.txt", "a2\n"));
    expect(listed).toEqual(["M in/a.txt"]);
  });
});

describe("the project directory itself is observed", () => {
  const saved = { GIT_DIR: process.env.GIT_DIR, GIT_WORK_TREE: process.env.GIT_WORK_TREE };
  afterEach(() => {
    for (const [key, value] of Object.entries(saved)) {
      if (value === undefined) delete process.env[key];
      else process.env[key] = value;
    }
  });

  it("inherited GIT_DIR and GIT_WORK_TREE pointing at another repository are ignored", async () => {
    const other = Repo.init().write("other.txt", "o\n").commitAll("other");
    const project = Repo.init().write("mine.txt", "m\n").commitAll("mine");
    process.env.GIT_DIR = join(other.dir, ".git");
    process.env.GIT_WORK_TREE = other.dir;
    const { listed } = await task(project.dir, () => {
      project.write("mine.txt", "m2\n");
      other.write("other.txt", "o2\n");
    });
    expect(listed).toEqual(["M mine.txt"]);
  });

  it("a project folder ignored by an enclosing repository falls back to checksums, with a warning", async () => {
    const outer = Repo.init().write(".gitignore", "build/\n").commitAll("outer");
    const project = join(outer.dir, "build", "project");
    mkdirSync(project, { recursive: true });
    writeFileSync(join(project, "a.txt"), "a\n");
    const { listed, start, changes } = await task(project, () => {
      writeFileSync(join(project, "a.txt"), "a2\n");
      writeFileSync(join(project, "b.txt"), "b\n");
    });
    expect(start.type).toBe("checksum");
    expect(start.type !== "unavailable" && start.warnings?.[0]).toMatch(/ignored by the enclosing git repository/);
    expect(changes.type !== "unavailable" && changes.warnings?.[0]).toMatch(/compared by checksums/);
    expect(listed).toEqual(["M a.txt", "A b.txt"]);
  });
});

describe("the project directory reached through a symlink", () => {
  it("a subdirectory of a repository opened through a symlinked path is observed with git", async () => {
    const repo = Repo.init().write("pkg/a.txt", "a\n").commitAll("base");
    const link = join(tempDir(), "linked");
    symlinkSync(repo.dir, link);
    const { start, listed } = await task(join(link, "pkg"), () => repo.write("pkg/a.txt", "a2\n"));
    expect(start.type).toBe("git");
    expect(listed).toEqual(["M pkg/a.txt"]);
  });
});

describe("warnings quoting a directory name", () => {
  it("a project folder named with a control character, ignored by its enclosing repository: start and end data still pass the edge's rules", async () => {
    const outer = Repo.init().write(".gitignore", "build/\n").commitAll("outer");
    const project = join(outer.dir, "build", "bell\u0007here");
    mkdirSync(project, { recursive: true });
    writeFileSync(join(project, "a.txt"), "a\n");
    const { start, listed } = await task(project, () => writeFileSync(join(project, "a.txt"), "a2\n"));
    expect(start.type !== "unavailable" && start.warnings?.[0]).toContain("bell?here");
    expect(listed).toEqual(["M a.txt"]);
  });
});
