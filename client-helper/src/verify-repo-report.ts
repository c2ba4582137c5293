/**
 * @module verify-repo-report
 * What `waymark verify --repo` prints of its check against git (./verify-repo.ts), with an export
 * or from the repository's notes alone (`waymark verify --repo <dir>`), and when it fails: any
 * task that git contradicts, that is undecided, or whose commits are neither on the branch nor
 * held there by a note. Exit codes as `waymark verify`'s: 0 nothing wrong, 1 a problem, 2 usage.
 */
import { join } from "node:path";
import { cacheRoot } from "./store.js";
import { FAILING_VERDICTS, type RepoCheck, RepoUsageError } from "./verify-repo.js";

const plural = (n: number, one: string, many = `${one}s`) => `${n} ${n === 1 ? one : many}`;

/** Where a diff of a note's line hashes runs. */
export function scratchRoot(): string {
  return join(cacheRoot(), "scratch");
}

/** Whether the check against git fails `waymark verify`. */
export function repoFailed(repo: RepoCheck | null): boolean {
  return repo?.tasks.some((task) => FAILING_VERDICTS.has(task.verdict)) ?? false;
}

/** Runs a check, its usage problems (not a repository, a ref naming nothing) turned into the caller's usage error. */
export async function repoCheck<E extends Error>(run: () => Promise<RepoCheck>, usage: new (message: string) => E): Promise<RepoCheck> {
  try {
    return await run();
  } catch (error) {
    if (error instanceof RepoUsageError) throw new usage(error.message);
    throw error;
  }
}

/** The lines of the report about git, one task at a time. */
export function repoLines(repo: RepoCheck): string[] {
  const lines = [`git (${repo.root}, ${repo.ref} at ${repo.head.slice(0, 12)}):`];
  let uncommitted = 0;
  for (const task of repo.tasks) {
    uncommitted += task.uncommitted;
    const name = `${task.id} ${JSON.stringify(task.name)}`;
    const c = task.confirmed;
    if (task.verdict === "agrees" && c) {
      const counted = [
        c.files === undefined ? null : plural(c.files, "committed file"),
        c.renames === undefined ? null : plural(c.renames, "rename"),
        c.lines === undefined ? null : plural(c.lines, "line count"),
        plural(c.commits, "commit"),
      ];
      lines.push(`  ${name}: agrees (${counted.filter((part) => part !== null).join(", ")})`);
    } else if (task.verdict === "rewritten") lines.push(`  ${name}: rewritten: ${task.reason}`);
    else if (task.verdict === "differs") lines.push(`  ${name}: DIFFERS from git${task.reason ? ` (${task.reason})` : ""}:`);
    else if (task.verdict === "undecided") lines.push(`  ${name}: UNDECIDED: ${task.undecidedWhy}:`);
    else if (task.verdict === "not_checked") lines.push(`  ${name}: not checked: ${task.reason}`);
    else lines.push(`  ${name}: FAILED: ${task.reason}`);
    for (const mapping of task.mapping) lines.push(`    on the branch: ${mapping}`);
    for (const difference of task.differences) lines.push(`    ${difference}`);
    for (const difference of task.undecided) lines.push(`    undecided: ${difference}`);
    if (task.explained.length > 0) {
      lines.push("    explained by the uncommitted changes the record names at the task's start:");
      for (const difference of task.explained) lines.push(`      ${difference}`);
    }
    for (const note of task.notes) lines.push(`    notes: ${note}`);
  }
  if (repo.tasks.length === 0) lines.push(`  no task: no note of Waymark's on ${repo.ref}`);
  if (uncommitted > 0)
    lines.push(`  ${plural(uncommitted, "file")} left uncommitted at the end of their task: out of git's reach, not checked`);
  return lines;
}

/** The closing line about git, for a check that did not fail. */
export function repoPassLine(repo: RepoCheck): string {
  const rewritten = repo.tasks.filter((task) => task.verdict === "rewritten").length;
  const agreeing = repo.tasks.filter((t) => t.verdict === "agrees").length;
  const decided = [
    agreeing > 0 || rewritten === 0 ? `${plural(agreeing, "task")} ${agreeing === 1 ? "agrees" : "agree"}` : null,
    rewritten > 0 ? `${rewritten} rewritten and checked on the commits that hold their records` : null,
  ];
  return `git decided every task on ${repo.ref}: ${decided.filter((part) => part !== null).join(", ")}${
    repo.tasks.some((t) => t.verdict === "not_checked") ? " (see above for tasks with nothing committed to check)" : ""
  }.`;
}

/**
 * `waymark verify --repo <dir>` without an export: the repository's notes against git. The notes
 * carry no signature, so nothing shows a deployment recorded them: that is a failure unless the
 * caller accepts it (`allowUnsigned`), and then the report says NOT CHECKED, never ok.
 */
export function notesReport(repo: RepoCheck, allowUnsigned: boolean): { text: string; failed: boolean } {
  const gitFailed = repoFailed(repo);
  const failed = gitFailed || !allowUnsigned;
  const lines = [...repoLines(repo)];
  if (gitFailed) lines.push("NOT OK: git does not agree with the repository's notes, or could not decide a task (see above).");
  else {
    lines.push(repoPassLine(repo));
    lines.push(
      allowUnsigned
        ? "NOT CHECKED (accepted with --allow-unsigned): the notes are not signed, so this shows git agrees with them, not that a deployment recorded them (verify the workflow's export with --repo for that)."
        : "NOT OK: the notes are not signed, and a check that did not run is not a pass: verify the workflow's export with --repo, or accept git's check of the notes alone with --allow-unsigned.",
    );
  }
  return { text: `${lines.join("\n")}\n`, failed };
}
