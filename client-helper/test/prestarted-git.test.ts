/**
 * git processes a tool call starts ahead of their input: runGit takes the one started for the
 * same query, directory and environment, and the call ends the ones it did not use. Real git.
 */
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { afterAll, describe, expect, it } from "vitest";
import { inertContext } from "../src/git/inert-config.js";
import { runGit } from "../src/git/process.js";
import { PrestartedGit } from "../src/prestarted-git.js";
import { cleanupTempDirs, Repo } from "./fixtures.js";

afterAll(cleanupTempDirs);

const SIZES = ["cat-file", "--batch-check"];
const turn = () => new Promise((resolve) => setImmediate(resolve));

describe("PrestartedGit", () => {
  it("starts after the call's first git process; runGit takes it once, for the same query and place only", async () => {
    const repo = Repo.init().write("a.txt", "a\n").commitAll("base");
    const blob = repo.git("rev-parse", "HEAD:a.txt").trim();
    const ready = new PrestartedGit();
    const context = { ...(await inertContext(repo.dir)), ready };
    ready.startAfterNext(context, SIZES);
    expect(ready.take(context, SIZES)).toBeUndefined();
    await runGit(context, ["rev-parse", "HEAD"]);
    await turn();
    // Another query, or the same one elsewhere, is not it.
    expect(ready.take(context, ["cat-file", "--batch"])).toBeUndefined();
    expect(ready.take({ ...context, cwd: `${repo.dir}/..` }, SIZES)).toBeUndefined();
    const started = ready.take(context, SIZES);
    expect(started).toBeDefined();
    expect(ready.take(context, SIZES)).toBeUndefined();
    expect((await started?.finish(Buffer.from(`${blob}\n`)))?.toString()).toBe(`${blob} blob 2\n`);
    ready.close();
  });

  it.runIf(existsSync("/proc/self/stat"))("ends what the call did not use, and starts nothing once closed", async () => {
    const repo = Repo.init().write("a.txt", "a\n").commitAll("base");
    const ready = new PrestartedGit();
    const context = { ...(await inertContext(repo.dir)), ready };
    ready.startAfterNext(context, SIZES);
    ready.startAfterNext(context, ["hash-object", "--stdin-paths"]);
    await runGit(context, ["rev-parse", "HEAD"]);
    await turn();
    // Started by this process or by the shell that starts its git processes (a moment later then).
    await waitFor(() => gitChildren() === 2);
    ready.close();
    await waitFor(() => gitChildren() === 0);
    ready.startAfterNext(context, SIZES);
    await runGit(context, ["rev-parse", "HEAD"]);
    await turn();
    expect(ready.take(context, SIZES)).toBeUndefined();
    expect(gitChildren()).toBe(0);
  });
});

/**
 * git processes this process started still running (Linux: /proc): its children, or its
 * descendants where a shell started them for it (../src/git/spawner.ts).
 */
function gitChildren(): number {
  const parents = new Map<number, number>();
  const gits: number[] = [];
  for (const pid of readdirSync("/proc").filter((name) => /^\d+$/.test(name))) {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
      const [, comm = "", rest = ""] = /^\d+ \((.*)\) (.*)$/s.exec(stat) ?? [];
      const [state, parent] = rest.split(" ");
      parents.set(Number(pid), Number(parent));
      if (comm === "git" && state !== "Z") gits.push(Number(pid));
    } catch {
      // gone meanwhile
    }
  }
  const mine = (pid: number) => {
    for (let up = parents.get(pid), depth = 0; up !== undefined && up > 1 && depth < 8; up = parents.get(up), depth++)
      if (up === process.pid) return true;
    return false;
  };
  return gits.filter(mine).length;
}

async function waitFor(condition: () => boolean): Promise<void> {
  for (let tries = 0; tries < 100 && !condition(); tries++) await new Promise((resolve) => setTimeout(resolve, 20));
  expect(condition()).toBe(true);
}
