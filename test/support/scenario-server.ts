/**
 * What a test file of records in the repository needs before its first test: the helper built, an
 * account of its own on the shared `wrangler dev`, and a cache directory for the helper and its
 * hooks; every directory its scenarios made removed after its last test.
 */
import { afterAll, beforeAll } from "vitest";
import { cleanupTempDirs, tempDir } from "../../client-helper/test/fixtures";
import { ensureBuilt } from "../../client-helper/test/support";
import type { DevServer } from "./dev-server";
import { cleanupScenarios } from "./merge-scenario";
import { sharedDevServer } from "./shared-server";

export function scenarioServer(): { server: () => DevServer; cacheHome: () => string } {
  let server: DevServer | undefined;
  let cacheHome: string | undefined;
  beforeAll(() => {
    ensureBuilt();
    server = sharedDevServer();
    cacheHome = tempDir("waymark-cache-");
  });
  afterAll(() => {
    cleanupTempDirs();
    cleanupScenarios();
  });
  const ready = <T>(value: T | undefined): T => {
    if (value === undefined) throw new Error("the scenario server is set up in beforeAll: use it inside a test");
    return value;
  };
  return { server: () => ready(server), cacheHome: () => ready(cacheHome) };
}
