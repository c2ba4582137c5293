import type { Browser, BrowserContext } from "playwright-core";
import { afterAll, beforeAll } from "vitest";
import { type CallTool, toolCaller } from "../pages/fixture";
import { browserMissing, CHROMIUM, launchChromium, skipBrowser } from "../support/chromium";
import { type DevServer, startDevServer } from "../support/dev-server";
import { getFrom } from "../support/loopback-get";
import { newReaderAddress, readersOf } from "../support/reader-proxy";
import { sharedDevServer } from "../support/shared-server";

export { browserMissing, CHROMIUM, launchChromium, skipBrowser };

/**
 * Inside a describe: one Chromium for the block, the shared wrangler dev with an account of the
 * block's own (test/support/shared-server.ts; `account` names one, e.g. the development token's
 * `dev`), and a tool caller for that account. A block whose tests restart the server asks for a
 * server of its own (`ownServer`). Each context (or page) the browser opens is a reader on a
 * machine of its own (test/support/reader-proxy.ts), as far as the server's read budgets can tell.
 */
export function useServerAndBrowser(options: { ownServer?: boolean; account?: string } = {}): {
  server: () => DevServer;
  browser: () => Browser;
  callTool: CallTool;
} {
  let server: DevServer | undefined;
  let browser: Browser | undefined;
  let readers: ReturnType<typeof readersOf> | undefined;
  let callTool: CallTool | undefined;
  beforeAll(async () => {
    let launched: Browser;
    [server, launched] = await Promise.all([
      options.ownServer ? startDevServer() : sharedDevServer({ account: options.account }),
      launchChromium(),
    ]);
    readers = readersOf(launched);
    browser = readers.browser;
    callTool = toolCaller(fetch, `${server.url}/mcp`, server.token);
  });
  afterAll(async () => {
    await browser?.close();
    await readers?.closeAll();
    await server?.stop();
  });
  const ready = <T>(value: T | undefined): T => {
    if (value === undefined) throw new Error("the dev server and browser are not started yet");
    return value;
  };
  return { server: () => ready(server), browser: () => ready(browser), callTool: (name, args) => ready(callTool)(name, args) };
}

/** The last event of a shared workflow, from its JSON export, read as a reader of its own. */
export async function lastSeqOf(shareUrl: string): Promise<number> {
  const got = await getFrom(`${shareUrl}/export.json`, newReaderAddress());
  if (got.status !== 200) throw new Error(`${shareUrl}/export.json answered ${got.status}: ${got.body.slice(0, 200)}`);
  return (JSON.parse(got.body) as { last_seq: number }).last_seq;
}

/** The owner signed in through the sign-in page with the server's token: the session, for new contexts' `storageState`. */
export async function ownerSession(
  browser: Browser,
  server: { url: string; token: string },
): Promise<Awaited<ReturnType<BrowserContext["storageState"]>>> {
  const context = await browser.newContext();
  const page = await context.newPage();
  await page.goto(`${server.url}/login`);
  await page.fill('input[name="token"]', server.token);
  await Promise.all([page.waitForURL("**/dashboard"), page.click('button[type="submit"]')]);
  const state = await context.storageState();
  await context.close();
  return state;
}
