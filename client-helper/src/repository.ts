/**
 * @module repository
 * The identity of the repository the helper runs in, sent with start_workflow and each start
 * snapshot: the fingerprint of @waymark/protocol/repository (normalised remote URL and root
 * commit), the remote for display and the current branch. Read with the helper's inert git
 * (no repository-configured command runs). Null outside a git repository, and for a
 * repository with neither a remote nor a commit (nothing would tell two of them apart).
 */
import { normalizeRemoteUrl, REPOSITORY_LIMITS, repositoryFingerprint } from "@waymark/protocol/repository-fingerprint";
import type { Repository } from "@waymark/protocol/wire";
import { WIRE_LIMITS } from "@waymark/protocol/wire-constants";
import { inertContext } from "./git/inert-config.js";
import { type GitContext, runGit } from "./git/process.js";
import { readableWarning } from "./outgoing.js";

async function gitText(context: GitContext, args: readonly string[]): Promise<string | null> {
  try {
    return (await runGit(context, args)).toString("utf8").trim() || null;
  } catch {
    return null;
  }
}

/** "origin" when it exists, else the first remote in name order; from the config already read when the context holds it. */
async function remoteUrl(context: GitContext): Promise<string | null> {
  if (context.remotes) {
    const name = context.remotes.has("origin") ? "origin" : [...context.remotes.keys()].sort()[0];
    return name === undefined ? null : (context.remotes.get(name) ?? null);
  }
  const names = (await gitText(context, ["remote"]))?.split("\n").sort() ?? [];
  const name = names.includes("origin") ? "origin" : names[0];
  return name ? gitText(context, ["config", "--get", `remote.${name}.url`]) : null;
}

/** The oldest-rooted history's first root commit of `commit`, in a stable order when there are several. */
async function rootCommit(context: GitContext, commit: string): Promise<string | null> {
  const roots = (await gitText(context, ["rev-list", "--max-parents=0", commit, "--"]))?.split("\n").sort() ?? [];
  return roots[0] ?? null;
}

/**
 * Root commits by the commit they were read from, for a long-running helper: `rev-list
 * --max-parents=0` walks the whole history, and its answer for one commit never changes.
 */
export class RootCommits {
  private readonly known = new Map<string, string | null>();

  async of(context: GitContext, commit: string): Promise<string | null> {
    const key = `${context.cwd}\0${commit}`;
    if (this.known.has(key)) return this.known.get(key) ?? null;
    const root = await rootCommit(context, commit);
    // A bounded memory: one entry per HEAD a task started on.
    if (this.known.size >= 256) this.known.clear();
    this.known.set(key, root);
    return root;
  }
}

/** Display text within the wire bounds: readable, cut rather than refused. */
function bounded(text: string | null, max: number): string | null {
  if (text === null || text === "") return null;
  const clean = readableWarning(text);
  return clean.length <= max ? clean : clean.slice(0, max);
}

async function identity(remote: string | null, root: string | null, branch: string | null): Promise<Repository | null> {
  if (remote === null && root === null) return null;
  return {
    fingerprint: await repositoryFingerprint(remote, root),
    remote: bounded(remote === null ? null : normalizeRemoteUrl(remote), REPOSITORY_LIMITS.REMOTE_CHARS),
    branch: bounded(branch, REPOSITORY_LIMITS.BRANCH_CHARS),
  };
}

const currentBranch = (context: GitContext) => gitText(context, ["symbolic-ref", "-q", "--short", "HEAD"]);

/** `known`: the inert git context of `dir` the tool call already read, if any. */
export async function readRepository(dir: string, known?: Promise<GitContext>): Promise<Repository | null> {
  let context: GitContext;
  try {
    context = { ...(await (known ?? inertContext(dir))), cwd: dir };
  } catch {
    return null;
  }
  if ((await gitText(context, ["rev-parse", "--is-inside-work-tree"])) !== "true") return null;
  const [remote, root, branch] = await Promise.all([remoteUrl(context), rootCommit(context, "HEAD"), currentBranch(context)]);
  return identity(remote, root, branch);
}

/**
 * The identity of the repository a git snapshot was just taken in, from what the snapshot and
 * the config read already know (its top level, HEAD and branch from `git status`): no git
 * process runs, except the root commit of a HEAD not seen before. `context`: the inert context
 * of the snapshot's call.
 */
export async function snapshotRepository(
  context: GitContext,
  snapshot: { root: string; head: string | null; branch?: string | null | undefined },
  roots: RootCommits,
): Promise<Repository | null> {
  const inRoot = { ...context, cwd: snapshot.root };
  // A branch name at the wire's length was clipped by the snapshot: read it whole.
  const clipped = (snapshot.branch?.length ?? 0) >= WIRE_LIMITS.BRANCH_CHARS;
  const [remote, root, branch] = await Promise.all([
    remoteUrl(inRoot),
    snapshot.head === null ? null : roots.of(inRoot, snapshot.head),
    clipped ? currentBranch(inRoot) : (snapshot.branch ?? null),
  ]);
  return identity(remote, root, branch);
}
