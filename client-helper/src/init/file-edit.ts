/**
 * @module init/file-edit
 * One file `waymark init` manages for an agent: how to apply its part, take it out again, and
 * check it for `waymark doctor` (./config-files.ts makes them from each agent's declarations).
 */
import { readFile } from "node:fs/promises";

export type FileEdit = {
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

/** A file's content; null when there is no file. */
export async function readOrNull(path: string): Promise<string | null> {
  try {
    return await readFile(path, "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return null;
    throw error;
  }
}
