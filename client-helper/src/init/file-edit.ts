/**
 * @module init/file-edit
 * One file `waymark init` manages for an agent: how to apply its part, take it out again, and
 * check it for `waymark doctor`. Its own module so that each agent's writer (./agents.ts,
 * ./codex.ts) can name it without importing the other.
 */
import type { AgentName } from "@waymark/protocol/agent-config";

export type FileEdit = {
  agent: AgentName;
  /** Absolute path. */
  path: string;
  /** Inside the project (shared through the repository) or in the user's home. */
  scope: "project" | "home";
  /** The content after init; null: no file. */
  apply: (content: string | null) => string | null;
  /** The content after init --remove; null: no file. */
  remove: (content: string | null) => string | null;
  /** What is missing or stale for doctor, or null when the file holds exactly what init writes. */
  check: (content: string | null) => string | null;
};
