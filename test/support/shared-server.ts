/**
 * @module test/support/shared-server
 * One `wrangler dev` for every end-to-end and browser test file that does not need a server of
 * its own (vitest.config.ts runs `setup` as the e2e project's global setup). Starting one costs
 * seconds of CPU on a 2-core machine, which a file per server paid again and again.
 *
 * Files share the server, not their data: each call of `sharedDevServer()` claims an account of
 * its own (one of ACCOUNTS bootstrap tokens the server is started with), so a file's workflows,
 * dashboard, search, resume-by-name, tokens and sessions see nothing another file wrote. What the
 * accounts still share: the server's process (a file that restarts, freezes or kills it needs its
 * own), its vars (set below; a file that needs others needs its own), and the limiter of failed
 * authentications (30 a minute from 127.0.0.1: a file that fails many on purpose needs its own).
 */
import { randomBytes } from "node:crypto";
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { inject } from "vitest";
import type { TestProject } from "vitest/node";
import { type DevServer, startDevServer } from "./dev-server.ts";

/** Several times the describe blocks that share the server: a claim is never given back, not even by a rerun in watch mode. */
const ACCOUNTS = 200;

interface SharedServer {
  url: string;
  /** `dev` (the development token's, claimed by name only) and ACCOUNTS others. */
  accounts: { account: string; token: string }[];
  /** A directory where a claim is an atomic mkdir of the account's name, across test workers. */
  claims: string;
}

declare module "vitest" {
  interface ProvidedContext {
    sharedServer: SharedServer;
  }
}

/** vitest global setup: starts the server before the project's files run, stops it after the last. */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const accounts = Array.from({ length: ACCOUNTS }, (_, i) => ({ account: `file-${i}`, token: randomBytes(24).toString("base64url") }));
  const server = await startDevServer({
    vars: {
      WAYMARK_TOKENS: accounts.map((a) => `${a.account}:${a.token}`).join(","),
      // A subscription checks its credential again every second (30 s in production), so a test
      // sees a revoked token end its stream without waiting half a minute.
      WAYMARK_SUBSCRIPTION_RECHECK_MS: "1000",
      // Webhooks may target the tests' receivers on 127.0.0.1, and retry after 200 ms (the backoff's
      // base; seconds in production): test/e2e/webhooks.test.ts. A test of the refusal of private
      // targets runs inside workerd (test/account/webhooks.test.ts) or on a server of its own.
      WAYMARK_WEBHOOK_ALLOW_PRIVATE: "true",
      WAYMARK_WEBHOOK_RETRY_BASE_MS: "200",
    },
  });
  accounts.unshift({ account: "dev", token: server.token });
  const claims = mkdtempSync(join(tmpdir(), "waymark-claims-"));
  project.provide("sharedServer", { url: server.url, accounts, claims });
  return async () => {
    await server.stop();
    rmSync(claims, { recursive: true, force: true });
  };
}

/** Claims an account for the caller: false when another caller has it. */
function claim(shared: SharedServer, account: string): boolean {
  try {
    mkdirSync(join(shared.claims, account));
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "EEXIST") return false;
    throw error;
  }
}

/**
 * The shared `wrangler dev` with an account of the caller's own (`token` is its bootstrap token,
 * with every scope): any free one, or the one named (`dev`, the development token's, for a test of
 * what the development account sees; one caller at most). `stop()` does nothing (the global
 * setup stops the server); `restart()` throws.
 */
export function sharedDevServer(options: { account?: string } = {}): DevServer & { account: string } {
  const shared = inject("sharedServer");
  if (!shared) throw new Error("no shared dev server: run this file in the e2e project (vitest.config.ts), whose global setup starts it");
  const named = options.account;
  const candidates = shared.accounts.filter((a) => (named === undefined ? a.account !== "dev" : a.account === named));
  if (candidates.length === 0) throw new Error(`the shared dev server has no account ${named}`);
  const mine = candidates.find((a) => claim(shared, a.account));
  if (!mine) {
    throw new Error(
      named === undefined
        ? `all ${candidates.length} accounts of the shared dev server are taken (in watch mode: restart vitest): raise ACCOUNTS in test/support/shared-server.ts`
        : `the shared dev server's account ${named} is claimed already (by another file, or by this one before a rerun in watch mode)`,
    );
  }
  return {
    url: shared.url,
    token: mine.token,
    account: mine.account,
    stop: async () => {},
    restart: () => Promise.reject(new Error("the shared dev server cannot restart: start a server of your own (startDevServer)")),
    output: () => "(the shared dev server's output is not kept)",
    inspectorUrl: () => {
      throw new Error("the shared dev server's inspector is not exposed: start a server of your own (startDevServer)");
    },
  };
}
