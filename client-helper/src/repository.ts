/**
 * @module repository
 * The identity of the repository the helper runs in, sent with start_workflow and each start
 * snapshot: the fingerprint of @waymark/protocol/repository (normalised remote URL and root
 * commit), the remote for display and the current branch. Read with the helper's inert git
 * (no repository-configured command runs). Null outside a git repository, and for a
 * repository with neither a remote nor a commit (nothing would tell two of them apart).
 */
import { normalizeRemoteUrl, REPOSITORY_LIMITS, repositoryFingerprint } from "@waymark/protocol/repository";
import type { Repository } from "@waymark/protocol/wire";
import { type GitContext, inertContext, runGit } from "./git.js";
import { readableWarning } from "./outgoing.js";

async function gitText(context: GitContext, args: readonly string[]): Promise<string | null> {
  try {
    return (await runGit(context, args)).toString("utf8").trim() || null;
  } catch {
    return null;
  }
}

/** "origin" when it exists, else the first remote in name order. */
async function remoteUrl(context: GitContext): Promise<string | null> {
  const names = (await gitText(context, ["remote"]))?.split("\n").sort() ?? [];
  const name = names.includes("origin") ? "origin" : names[0];
  return name ? gitText(context, ["config", "--get", `remote.${name}.url`]) : null;
}

/** The oldest-rooted history's first root commit, in a stable order when there are several. */
async function rootCommit(context: GitContext): Promise<string | null> {
  const roots = (await gitText(context, ["rev-list", "--max-parents=0", "HEAD"]))?.split("\n").sort() ?? [];
  return roots[0] ?? null;
}

/** Display text within the wire bounds: readable, cut rather than refused. */
function bounded(text: string | null, max: number): string | null {
  if (text === null || text === "") return null;
  const clean = readableWarning(text);
  return clean.length <= max ? clean : clean.slice(0, max);
}

/** `known`: the inert git context of `dir` the tool call already read, if any. */
export async function readRepository(dir: string, known?: Promise<GitContext>): Promise<Repository | null> {
  let context: GitContext;
  try {
    context = { ...(await (known ?? inertContext(dir))), cwd: dir };
  } catch {
    return null;
  }
  if ((await gitText(context, ["rev-parse", "--is-inside-work-tree"])) !== "true") return null;
  const [remote, root, branch] = await Promise.all([
    remoteUrl(context),
    rootCommit(context),
    gitText(context, ["symbolic-ref", "-q", "--short", "HEAD"]),
  ]);
  if (remote === null && root === null) return null;
  return {
    fingerprint: await repositoryFingerprint(remote, root),
    remote: bounded(remote === null ? null : normalizeRemoteUrl(remote), REPOSITORY_LIMITS.REMOTE_CHARS),
    branch: bounded(branch, REPOSITORY_LIMITS.BRANCH_CHARS),
  };
}
