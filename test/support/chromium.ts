import { existsSync } from "node:fs";
import { type Browser, chromium } from "playwright-core";
import { skipLocally } from "./prerequisites.ts";

/** Debian's chromium (apt-get install -y chromium), driven by playwright-core; used by the browser tests and the bench. */
export const CHROMIUM = process.env.WAYMARK_CHROMIUM ?? "/usr/bin/chromium";

export const browserMissing = !existsSync(CHROMIUM);
const missingReason = browserMissing ? `Chromium not found at ${CHROMIUM} (apt-get install -y chromium)` : null;

/** Locally a missing browser skips the browser tests; under CI=true it fails them (test/support/prerequisites.ts). */
export const skipBrowser = skipLocally(missingReason);

/** Headless, and quiet on a machine whose network reaches only package registries. */
export async function launchChromium(): Promise<Browser> {
  if (missingReason) throw new Error(`${missingReason}: required when CI=true`);
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
