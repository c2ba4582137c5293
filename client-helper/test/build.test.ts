import { spawn, spawnSync } from "node:child_process";
import { readdirSync, statSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { BIN, HELPER_DIR, SYSTEM_NODE } from "./support.js";

const DIST = join(HELPER_DIR, "dist");
function runHelper(args: string[]): Promise<{ status: number | null; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(SYSTEM_NODE, [BIN, ...args], { stdio: ["ignore", "ignore", "pipe"] });
    let stderr = "";
    child.stderr.on("data", (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    child.on("close", (status) => resolve({ status, stderr }));
  });
}
const build = () => spawnSync(process.execPath, [join(HELPER_DIR, "build.mjs")], { cwd: HELPER_DIR, encoding: "utf8" });

function builtFiles(): Map<string, number> {
  const files = new Map<string, number>();
  for (const dir of [DIST, join(DIST, "chunks")])
    for (const name of readdirSync(dir)) {
      const path = join(dir, name);
      if (statSync(path).isFile() && name.endsWith(".js")) files.set(path, statSync(path).mtimeMs);
    }
  return files;
}

// `npm pack` runs `prepare`, which rebuilds dist/ while other processes run it (the tests, an agent's
// hooks): a rebuild from the same sources must leave every module as it was.
describe("building the helper while it runs", () => {
  it("rewrites no module whose bytes did not change", () => {
    expect(build().status).toBe(0);
    const before = builtFiles();
    expect(build().status).toBe(0);
    const after = builtFiles();
    expect([...after.keys()].sort()).toEqual([...before.keys()].sort());
    for (const [path, mtime] of before) if (!path.endsWith("bin.js")) expect({ path, mtime: after.get(path) }).toEqual({ path, mtime });
  });

  it("every command started during a rebuild loads all of its modules", async () => {
    const rebuilding = spawn(process.execPath, [join(HELPER_DIR, "build.mjs")], { cwd: HELPER_DIR, stdio: "ignore" });
    let finished = false;
    const done = new Promise<number | null>((resolve) => rebuilding.on("exit", resolve)).finally(() => {
      finished = true;
    });
    // `notes --help` loads the lazily imported notes chunks, the modules the failure named.
    let runs = 0;
    while (!finished || runs < 3) {
      const run = await runHelper(["notes", "--help"]);
      expect(run).toEqual({ status: 0, stderr: "" });
      runs += 1;
    }
    expect(await done).toBe(0);
  }, 60_000);
});
