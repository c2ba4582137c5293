import { existsSync } from "node:fs";
import { type Browser, chromium } from "playwright-core";

/** Debian's chromium (apt-get install -y chromium), driven by playwright-core; used by the browser tests and the bench. */
export const CHROMIUM = process.env.WAYMARK_CHROMIUM ?? "/usr/bin/chromium";

export const browserMissing = !existsSync(CHROMIUM);

/** Headless, and quiet on a machine whose network reaches only package registries. */
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
