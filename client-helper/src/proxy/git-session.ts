/**
 * @module proxy/git-session
 * The git side of one tool call: where git finds the repository of a directory and its inert
 * context (kept between calls by ../config-cache.ts while nothing it depends on changed), and the
 * git processes started ahead while the call's `git status` runs (../prestarted-git.ts): the hashing of
 * dirty files unless the helper hashes them itself (../verbatim-blobs.ts), and whatever else the
 * caller asks for. The caller closes `ready` when its call is done.
 */
import { type Found, InertContexts } from "../config-cache.js";
import { inertContext, plainContext } from "../git/inert-config.js";
import type { GitContext } from "../git/process.js";
import { gitToplevel, HASH_FILES } from "../git/queries.js";
import { PrestartedGit } from "../prestarted-git.js";
import { repositoryStoresVerbatim } from "../verbatim-blobs.js";

/** git's hashing of dirty files, unless the helper hashes them itself in this repository. */
function hashing(context: GitContext, gitDir: string | undefined): (readonly string[])[] {
  return gitDir !== undefined && repositoryStoresVerbatim(context, gitDir) ? [] : [HASH_FILES];
}

export type GitCall = {
  toplevel: Promise<Found | null>;
  context: Promise<GitContext>;
  ready: PrestartedGit;
};

export class GitSessions {
  /** Inert git contexts kept while the config files they were read from are unchanged. */
  private readonly contexts = new InertContexts();

  /**
   * The repository of `dir` and its inert context, for a call that does not know it yet
   * (start_task). `prestart`: git queries to start in the top level while `git status` runs,
   * besides the hashing of dirty files.
   */
  forDirectory(dir: string, prestart: readonly (readonly string[])[]): GitCall {
    const kept = this.contexts.kept(dir);
    const toplevel = kept ? Promise.resolve(kept) : gitToplevel(plainContext(dir));
    toplevel.catch(() => {});
    const known = kept
      ? Promise.resolve(kept.context)
      : toplevel.then(
          (found) => this.contexts.of(dir, found),
          () => inertContext(dir),
        );
    const ready = new PrestartedGit();
    const context: Promise<GitContext> = known.then(async (inert) => {
      const found = await toplevel.catch(() => null);
      if (found) {
        for (const args of [...hashing(inert, found.gitDir), ...prestart]) ready.startAfterNext({ ...inert, cwd: found.root }, args);
      }
      return { ...inert, ready };
    });
    context.catch(() => {});
    return { toplevel, context, ready };
  }

  /**
   * The inert context of a repository a start snapshot named (complete_task), in its top level,
   * with the hashing of dirty files started ahead; `ahead` adds what else this call starts
   * while `git status` runs.
   */
  forRoot(root: string, gitDir: string | undefined, ready: PrestartedGit, ahead: (inRoot: GitContext) => void): Promise<GitContext> {
    const context = this.contexts.of(root, gitDir ? { root, gitDir } : null).then((inert) => {
      const inRoot = { ...inert, cwd: root, ready };
      for (const args of hashing(inert, gitDir)) ready.startAfterNext(inRoot, args);
      ahead(inRoot);
      return inRoot;
    });
    context.catch(() => {});
    return context;
  }
}
