import { existsSync } from "node:fs";
import { type Browser, chromium } from "playwright-core";

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
