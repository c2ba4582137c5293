/**
 * @module hooks/launcher
 * The hooks' fast path. Hooks run on every session start and stop of the agent; through
 * `npx --package=<tarball URL>` each run costs npm's own start-up (about a second, measured)
 * before the helper even starts. So every hook run leaves a one-line launcher in the cache
 * dir, `<cache>/waymark/helper-<version>.mjs`, that imports the helper npx installed; the
 * installed hook command runs that launcher with node and falls back to npx when it is
 * missing or broken (a cleaned npx cache). The launcher names its version, so a hook of
 * another helper version never runs this one. Beside it, `helper-<version>.bin` holds the same
 * helper's path as plain text: the MCP server's command (a shell line) checks that the file it
 * names is there and runs it with node, else npx (@waymark/protocol/agent-config's
 * mcpServerCommand), so an agent's session does not wait for npm either.
 */
import { randomUUID } from "node:crypto";
import { mkdir, readFile, realpath, rename, writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { pathToFileURL } from "node:url";
import { cacheRoot } from "../store.js";

export function launcherPath(version: string, env: NodeJS.ProcessEnv = process.env): string {
  return join(cacheRoot(env), `helper-${version}.mjs`);
}

function binNotePath(version: string, env: NodeJS.ProcessEnv): string {
  return join(cacheRoot(env), `helper-${version}.bin`);
}

/** Writes `text` to `path` unless it holds it already, through a temporary file (never half-written). */
async function writeIfChanged(path: string, text: string): Promise<void> {
  if ((await readFile(path, "utf8").catch(() => null)) === text) return;
  await mkdir(dirname(path), { recursive: true, mode: 0o700 });
  const temp = `${path}.${process.pid}.${randomUUID()}.tmp`;
  await writeFile(temp, text, { mode: 0o600 });
  await rename(temp, path);
}

function launcherSource(version: string, bin: string): string {
  return `// Written by waymark hook: runs waymark-helper ${version} without npx. Safe to delete.\nimport ${JSON.stringify(pathToFileURL(bin).href)};\n`;
}

/** Writes (or refreshes) the launcher to the helper running now; never throws. */
export async function ensureLauncher(
  version: string,
  script: string | undefined = process.argv[1],
  env: NodeJS.ProcessEnv = process.env,
): Promise<void> {
  try {
    if (!script) return;
    const bin = await realpath(script);
    const path = launcherPath(version, env);
    // Started through the launcher itself: it already points at a helper that runs.
    if (bin === (await realpath(path).catch(() => null))) return;
    // A path with a newline cannot be read back by the shell line: the MCP server then goes through npx.
    if (!bin.includes("\n")) await writeIfChanged(binNotePath(version, env), `${bin}\n`);
    await writeIfChanged(path, launcherSource(version, bin));
  } catch {
    // The fast path is an optimisation: without it hooks still run through npx.
  }
}
