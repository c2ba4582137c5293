/**
 * @module init/diff
 * Unified diffs for `waymark init --dry-run`, made by git (which the helper needs anyway)
 * on temporary copies, with the headers naming the real file.
 */
import { execFile } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { cleanGitEnv } from "../git/process.js";

export async function unifiedDiff(label: string, before: string | null, after: string | null): Promise<string> {
  if (before === after) return "";
  const dir = await mkdtemp(join(tmpdir(), "waymark-diff-"));
  try {
    const left = before === null ? "/dev/null" : join(dir, "before");
    const right = after === null ? "/dev/null" : join(dir, "after");
    if (before !== null) await writeFile(left, before);
    if (after !== null) await writeFile(right, after);
    const output = await new Promise<string>((done, fail) => {
      execFile(
        "git",
        ["diff", "--no-index", "--no-color", "--no-ext-diff", "--no-textconv", "--no-renames", "--", left, right],
        // Run in the scratch directory with a clean environment: no repository's config (and its diff drivers) applies.
        { cwd: dir, encoding: "utf8", maxBuffer: 16 * 1024 * 1024, env: { ...cleanGitEnv(), GIT_CONFIG_NOSYSTEM: "1" } },
        // Exit code 1 means "the files differ": that is the answer, not a failure.
        (error, stdout) => (error && error.code !== 1 ? fail(error) : done(stdout)),
      );
    });
    const lines = output.split("\n");
    const start = lines.findIndex((line) => line.startsWith("--- "));
    if (start < 0) return "";
    const body = lines.slice(start + 2).join("\n");
    return `--- ${before === null ? "/dev/null" : `a/${label}`}\n+++ ${after === null ? "/dev/null" : `b/${label}`}\n${body}`;
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
