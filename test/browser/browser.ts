import type { Browser } from "playwright-core";
import { afterAll, beforeAll } from "vitest";
import { type CallTool, toolCaller } from "../pages/fixture";
import { browserMissing, CHROMIUM, launchChromium } from "../support/chromium";
import { type DevServer, startDevServer } from "../support/dev-server";

export { browserMissing, CHROMIUM, launchChromium };

/** Locally a missing browser skips the browser tests; in CI (CI=true) it fails them. */
export const skipBrowser = browserMissing && process.env.CI !== "true";

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
