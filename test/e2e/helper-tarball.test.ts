/**
 * The helper comes from the endpoint itself: `wrangler dev` serves the version-matched
 * tarball that scripts/helper-tarball.mjs built, /helper/latest redirects to it, and
 * `npx -y --package=<endpoint>/helper/… waymark` runs it from an empty directory with a
 * fresh npm cache, as on a machine that has never seen this repository.
 */
import { spawnSync } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import type { DevServer } from "../support/dev-server.js";
import { sharedDevServer } from "../support/shared-server.js";

const ROOT = resolve(import.meta.dirname, "../..");
const VERSION = (JSON.parse(readFileSync(join(ROOT, "client-helper", "package.json"), "utf8")) as { version: string }).version;
const TARBALL = `waymark-helper-${VERSION}.tgz`;
const temps: string[] = [];
let server: DevServer;

// The tarball is the one the shared server was started with: test/support/worker-build-setup.ts
// rebuilds it before any server starts when the helper's sources are newer (rebuilding it here
// would reload the shared server under the other files).
beforeAll(() => {
  server = sharedDevServer();
});
afterAll(async () => {
  for (const dir of temps) rmSync(dir, { recursive: true, force: true });
});

function temp(prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  temps.push(dir);
  return dir;
}

it("serves the version-matched tarball and redirects /helper/latest to it", async () => {
  const tarball = await fetch(`${server.url}/helper/${TARBALL}`);
  expect(tarball.status).toBe(200);
  const bytes = new Uint8Array(await tarball.arrayBuffer());
  expect([bytes[0], bytes[1]]).toEqual([0x1f, 0x8b]); // gzip
  const latest = await fetch(`${server.url}/helper/latest`, { redirect: "manual" });
  expect(latest.status).toBe(302);
  expect(new URL(latest.headers.get("location") ?? "", server.url).pathname).toBe(`/helper/${TARBALL}`);
  expect((await fetch(`${server.url}/helper/waymark-helper-0.0.0-not-built.tgz`)).status).toBe(404);
  expect((await fetch(`${server.url}/.gitignore`)).status).toBe(404);
});

it.each([
  [TARBALL, "the version-matched tarball"],
  ["latest", "the stable /helper/latest redirect the server's warnings name"],
])(
  "npx -y --package=<endpoint>/helper/%s waymark --version runs from an empty directory (%s)",
  (file) => {
    const empty = temp("waymark-empty-");
    const cache = temp("waymark-npm-cache-");
    const env: Record<string, string> = {};
    for (const [key, value] of Object.entries(process.env)) if (value !== undefined && !key.startsWith("npm_")) env[key] = value;
    const run = spawnSync("npx", ["-y", `--package=${server.url}/helper/${file}`, "waymark", "--version"], {
      cwd: empty,
      env: { ...env, npm_config_cache: cache, npm_config_update_notifier: "false" },
      encoding: "utf8",
      timeout: 170_000,
    });
    expect(run.stderr).not.toMatch(/ERR!/);
    expect(run.status).toBe(0);
    expect(run.stdout.trim()).toContain(VERSION);
    expect(readdirSync(empty)).toEqual([]);
  },
  180_000,
);
