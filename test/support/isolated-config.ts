/**
 * @module isolated-config
 * Gives every Node test file a user config directory of its own (XDG_CONFIG_HOME), so the
 * helper's user-level config (the endpoint `waymark init` keeps) is never the developer's real
 * one and never one another test file wrote: `waymark mcp` without --url must behave the same on
 * every machine and in any file order.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll } from "vitest";

const configHome = mkdtempSync(join(tmpdir(), "waymark-config-"));
process.env.XDG_CONFIG_HOME = configHome;
afterAll(() => rmSync(configHome, { recursive: true, force: true }));
