/**
 * @module init/detect
 * Which agents a developer uses, from the signs each agent's setup names (`evidence`: its project
 * folders or instruction files, its folders in the home directory, its command on PATH).
 */
import { accessSync, constants, existsSync } from "node:fs";
import { delimiter, join } from "node:path";
import type { Agent, SetupContext } from "../agents/agent.js";

/** Whether an executable named `command` is in one of PATH's directories. */
export function isOnPath(command: string, path: string | undefined): boolean {
  for (const dir of (path ?? "").split(delimiter)) {
    if (dir === "") continue;
    try {
      accessSync(join(dir, command), constants.X_OK);
      return true;
    } catch {
      // not in this directory
    }
  }
  return false;
}

/** The evidence found for the agent (empty: not detected). */
export function detectAgent(agent: Agent, ctx: SetupContext): string[] {
  return agent.setup
    .evidence(ctx)
    .filter((sign) => ("command" in sign ? isOnPath(sign.command, ctx.env.PATH) : existsSync(sign.path)))
    .map((sign) => sign.label);
}
