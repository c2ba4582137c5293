/**
 * @module version
 * This helper's version, from its package.json: the one beside src/ when run from the sources,
 * beside dist/ when built; a module the build puts in dist/chunks/ looks one folder further up.
 */
import { readFileSync } from "node:fs";

function packageVersion(): string {
  for (const up of ["../package.json", "../../package.json"]) {
    try {
      const found = JSON.parse(readFileSync(new URL(up, import.meta.url), "utf8")) as { name?: string; version?: string };
      if (found.name === "waymark-helper" && typeof found.version === "string") return found.version;
    } catch {
      // Not at this level.
    }
  }
  throw new Error("waymark-helper: its package.json was not found beside the code");
}

export const HELPER_VERSION = packageVersion();
