/**
 * @module hooks/patch
 * The files a Codex `apply_patch` call touches, read from the patch itself (its hook payload's
 * `tool_input.command` is the raw patch): every `*** Add File:`, `*** Update File:`,
 * `*** Delete File:` and `*** Move to:` header. Paths are as the patch names them (relative to
 * the session's working directory, or absolute).
 */

const HEADER = /^\*\*\* (?:(?:Add|Update|Delete) File|Move to): (.+?)\s*$/gm;

/** Whether a shell command carries a patch (`apply_patch <<'EOF'` run through the shell). */
export function hasPatch(text: string): boolean {
  return text.includes("*** Begin Patch");
}

/** The paths a patch names, in order, without repeats. */
export function patchPaths(patch: string): string[] {
  const paths = new Set<string>();
  for (const match of patch.matchAll(HEADER)) if (match[1]) paths.add(match[1]);
  return [...paths];
}
