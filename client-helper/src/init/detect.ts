/**
 * @module init/detect
 * Which agents a developer uses: their project folders or instruction files, their
 * configuration folders in the home directory, or their command on PATH.
 */
import { accessSync, constants, existsSync } from "node:fs";
import { delimiter, join } from "node:path";
import type { AgentName } from "./agents.js";

export type Places = { project: string; home: string; codexHome: string; path: string | undefined };

function onPath(command: string, path: string | undefined): boolean {
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

/** The evidence found for each agent (empty: not detected). */
export function detectAgents(places: Places): Record<AgentName, string[]> {
  const found = (candidates: [string, boolean][]) => candidates.filter(([, present]) => present).map(([label]) => label);
  const p = (...parts: string[]) => existsSync(join(places.project, ...parts));
  const h = (...parts: string[]) => existsSync(join(places.home, ...parts));
  return {
    claude: found([
      [".claude/", p(".claude")],
      ["CLAUDE.md", p("CLAUDE.md")],
      [".mcp.json", p(".mcp.json")],
      ["~/.claude/", h(".claude")],
      ["claude on PATH", onPath("claude", places.path)],
    ]),
    cursor: found([
      [".cursor/", p(".cursor")],
      [".cursorrules", p(".cursorrules")],
      ["~/.cursor/", h(".cursor")],
      ["cursor-agent on PATH", onPath("cursor-agent", places.path)],
    ]),
    codex: found([
      [".codex/", p(".codex")],
      ["AGENTS.md", p("AGENTS.md")],
      [places.codexHome, existsSync(places.codexHome)],
      ["codex on PATH", onPath("codex", places.path)],
    ]),
  };
}
