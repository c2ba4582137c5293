import { existsSync } from "node:fs";
import { type Browser, chromium } from "playwright-core";
import { afterAll, beforeAll } from "vitest";
import { type CallTool, toolCaller } from "../pages/fixture";
import { type DevServer, startDevServer } from "../support/dev-server";

/** Debian's chromium (apt-get install -y chromium), driven by playwright-core. */
export const CHROMIUM = process.env.WAYMARK_CHROMIUM ?? "/usr/bin/chromium";

/** Locally a missing browser skips the browser tests; in CI (CI=true) it fails them. */
export const browserMissing = !existsSync(CHROMIUM);
export const skipBrowser = browserMissing && process.env.CI !== "true";

export async function launchChromium(): Promise<Browser> {
  if (browserMissing) throw new Error(`Chromium not found at ${CHROMIUM}: apt-get install -y chromium (required when CI=true)`);
  return chromium.launch({
    executablePath: CHROMIUM,
    args: [
      "--headless",
      "--no-sandbox",
      "--disable-gpu",
      "--no-first-run",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
    ],
  });
}

/** Inside a describe: one wrangler dev and one Chromium for the block, and a tool caller for the dev account. */
export function useServerAndBrowser(): { server: () => DevServer; browser: () => Browser; callTool: CallTool } {
  let server: DevServer | undefined;
  let browser: Browser | undefined;
  let callTool: CallTool | undefined;
  beforeAll(async () => {
    [server, browser] = await Promise.all([startDevServer(), launchChromium()]);
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
