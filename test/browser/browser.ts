import type { Browser } from "playwright-core";
import { afterAll, beforeAll } from "vitest";
import { type CallTool, toolCaller } from "../pages/fixture";
import { browserMissing, CHROMIUM, launchChromium } from "../support/chromium";
import { type DevServer, startDevServer } from "../support/dev-server";
import { sharedDevServer } from "../support/shared-server";

export { browserMissing, CHROMIUM, launchChromium };

/** Locally a missing browser skips the browser tests; in CI (CI=true) it fails them. */
export const skipBrowser = browserMissing && process.env.CI !== "true";

/**
 * Inside a describe: one Chromium for the block, the shared wrangler dev with an account of the
 * block's own (test/support/shared-server.ts; `account` names one, e.g. the development token's
 * `dev`), and a tool caller for that account. A block whose tests restart the server asks for a
 * server of its own (`ownServer`).
 */
export function useServerAndBrowser(options: { ownServer?: boolean; account?: string } = {}): {
  server: () => DevServer;
  browser: () => Browser;
  callTool: CallTool;
} {
  let server: DevServer | undefined;
  let browser: Browser | undefined;
  let callTool: CallTool | undefined;
  beforeAll(async () => {
    [server, browser] = await Promise.all([
      options.ownServer ? startDevServer() : sharedDevServer({ account: options.account }),
      launchChromium(),
    ]);
    callTool = toolCaller(fetch, `${server.url}/mcp`, server.token);
  });
  afterAll(async () => {
    await browser?.close();
    await server?.stop();
  });
  const ready = <T>(value: T | undefined): T => {
    if (value === undefined) throw new Error("the dev server and browser are not started yet");
    return value;
  };
  return { server: () => ready(server), browser: () => ready(browser), callTool: (name, args) => ready(callTool)(name, args) };
}
