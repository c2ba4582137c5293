/**
 * @module init/commit-advice
 * Which of the files init wrote into the project git would take into the next commit made with
 * `git add -A` (untracked, or changed since HEAD): an agent's first commit would sweep them in with
 * its work, unnoticed. Init says to commit them first (they set the project up for everyone who
 * clones it), and doctor checks it; a file listed in an ignore file (`.git/info/exclude`, to keep
 * the setup to oneself) is fine either way. git runs with the helper's clean environment and reads
 * nothing the repository's config could turn into a command (`status` with no fsmonitor).
 */
import { execFile } from "node:child_process";
import { relative } from "node:path";
import { cleanGitEnv } from "../git/process.js";

/** Of `paths` (absolute, inside `project`), those untracked or changed since HEAD, relative to the project; null when git cannot tell. */
export function uncommittedFiles(project: string, paths: readonly string[]): Promise<string[] | null> {
  if (paths.length === 0) return Promise.resolve([]);
  const relativePaths = paths.map((path) => relative(project, path));
  return new Promise((done) => {
    execFile(
      "git",
      [
        "-c",
        "core.fsmonitor=false",
        "--no-optional-locks",
        "status",
        "--porcelain=v1",
        "-z",
        "--untracked-files=all",
        "--",
        ...relativePaths,
      ],
      { cwd: project, timeout: 10_000, encoding: "utf8", env: cleanGitEnv(), maxBuffer: 1024 * 1024 },
      (error, stdout) => {
        if (error) return done(null);
        // Entries are "XY path\0" (a rename adds its old path as one more entry, which none of these files has).
        const listed = new Set(stdout.split("\0").flatMap((entry) => (entry.length > 3 ? [entry.slice(3)] : [])));
        done(relativePaths.filter((path) => listed.has(path)));
      },
    );
  });
}

/** The command that commits them, quoted for a POSIX shell where needed. */
export function commitCommand(files: readonly string[]): string {
  const quoted = files.map((file) => (/^[\w./@+-]+$/.test(file) ? file : `'${file.replaceAll("'", "'\\''")}'`));
  return `git add ${quoted.join(" ")} && git commit -m "Set up Waymark"`;
}
