/**
 * @module name-hash
 * The sha256 (hex) the helper's cache names its files and folders by (a task's records in the
 * journal, the task store and the command log; a project's folder; a working tree's key): a pure
 * function of its text, asked for about thirty times per complete_task with the same few texts, so
 * the last answers are kept (createHash makes an object and crosses into C++ each time).
 */
import { createHash } from "node:crypto";

/** Answers kept: a session's tasks and folders, far more than one call names. */
const KEPT = 256;
const kept = new Map<string, string>();

export function nameHash(text: string): string {
  const known = kept.get(text);
  if (known !== undefined) return known;
  const digest = createHash("sha256").update(text).digest("hex");
  // The oldest answer goes first (a Map iterates in insertion order).
  if (kept.size >= KEPT) kept.delete(kept.keys().next().value as string);
  kept.set(text, digest);
  return digest;
}
