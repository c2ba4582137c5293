/**
 * The Worker imports what the build makes: build/page-script-*.txt (the pages' scripts, from
 * src/pages/client/) and build/helper-tarball.bin (the helper tarball it serves), which `npm
 * start` and `npm run deploy` build first. Vitest's global setup (so `npm test`) and every dev
 * server the tests, benches and screenshot script start build them here, so no entry point depends
 * on a pre-step. The page scripts are rebuilt every time (esbuild, milliseconds; unchanged bytes
 * are not rewritten), so a test never runs an old script; the tarball only when it is missing or
 * older than the helper's sources (a fresh checkout, or an edit since), so nothing packs the helper
 * again when nothing changed.
 *
 * The global setup also builds the helper's dist/ (which the tests run as users do) when it is
 * older than its sources, once for the whole run, and says so to the test workers
 * (HELPER_BUILT_ENV): test files running side by side must not rebuild files the others are
 * executing.
 */
import { execFileSync } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";

export const REPO_ROOT = resolve(import.meta.dirname, "../..");

/** Set in the test workers' environment once the global setup has built the helper. */
export const HELPER_BUILT_ENV = "WAYMARK_TEST_HELPER_BUILT";
/** The test run's directory of claimed reader addresses (./reader-proxy.ts). */
export const READER_CLAIMS_ENV = "WAYMARK_TEST_READER_CLAIMS";

/** What the helper's dist/ and its tarball are built from. */
const HELPER_SOURCES = [
  "client-helper/src",
  "client-helper/build.mjs",
  "client-helper/package.json",
  "client-helper/README.md",
  "packages/protocol/src",
];

function newestMtime(path: string): number {
  const stat = statSync(path);
  if (!stat.isDirectory()) return stat.mtimeMs;
  let newest = stat.mtimeMs;
  for (const entry of readdirSync(path)) newest = Math.max(newest, newestMtime(join(path, entry)));
  return newest;
}

/** Missing, or older than a source of the helper. */
function stale(root: string, built: string): boolean {
  const file = join(root, built);
  if (!existsSync(file)) return true;
  const sources = HELPER_SOURCES.map((source) => join(root, source)).filter((source) => existsSync(source));
  return Math.max(...sources.map(newestMtime)) > statSync(file).mtimeMs;
}

export function ensureWorkerBuild(root = REPO_ROOT): void {
  execFileSync(process.execPath, [join(root, "scripts", "page-scripts.mjs")], { cwd: root, stdio: "inherit" });
  ensureCurrentHelperTarball(root);
}

/**
 * Builds the helper tarball when it is missing or a source it is built from changed since: what an
 * agent installs through `npx --package=<endpoint>/helper/…` (the README's setup) is then the helper
 * under test.
 */
export function ensureCurrentHelperTarball(root = REPO_ROOT): void {
  if (!stale(root, join("build", "helper-tarball.bin"))) return;
  execFileSync(process.execPath, [join(root, "scripts", "helper-tarball.mjs")], { cwd: root, stdio: "inherit" });
}

export default function setup(): () => void {
  // `npm pack` builds dist/ first, so a fresh tarball usually means a fresh dist/ too.
  ensureWorkerBuild();
  if (stale(REPO_ROOT, join("client-helper", "dist", "bin.js"))) {
    execFileSync(process.execPath, [join(REPO_ROOT, "client-helper", "build.mjs")], {
      cwd: join(REPO_ROOT, "client-helper"),
      stdio: "inherit",
    });
  }
  process.env[HELPER_BUILT_ENV] = "1";
  // Where the browser tests' readers claim their loopback addresses (./reader-proxy.ts), for this run only.
  const readers = mkdtempSync(join(tmpdir(), "waymark-readers-"));
  process.env[READER_CLAIMS_ENV] = readers;
  return () => rmSync(readers, { recursive: true, force: true });
}
