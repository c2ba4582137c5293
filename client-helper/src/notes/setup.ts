/**
 * @module notes/setup
 * What makes a repository's Waymark notes (refs/notes/waymark) follow the code: set by `waymark
 * init` (and `waymark notes setup`, for a project whose agents came as plugins), checked by
 * `waymark doctor`, taken out by `waymark init --remove`. Only the repository's own config
 * (`git config --local`), only these keys:
 *
 * - `notes.rewriteRef = refs/notes/waymark` (added beside any other value): `git commit --amend`
 *   and `git rebase` copy a rewritten commit's note to the new commit (`notes.rewrite.amend` and
 *   `.rebase` are on by default; they are set on only where a config turned them off).
 * - for each remote, `remote.<name>.fetch += +refs/notes/waymark*:refs/notes/remotes/<name>/waymark*`:
 *   every fetch brings the remote's notes into a remote-tracking ref the helper reads beside its
 *   own. A pattern, because a fetch refspec that names a ref the remote lacks fails the whole
 *   `git fetch`; a remote-tracking destination, because fetching into refs/notes/waymark itself
 *   would overwrite notes not pushed yet.
 *
 * Pushing is not configured: a `remote.<name>.push` refspec replaces what a plain `git push`
 * pushes (the current branch), so it would change every push. Notes are pushed with `git push
 * <remote> refs/notes/waymark` (doctor says when they have not been).
 */
import { NOTES_REF } from "@waymark/protocol/git-note";
import { inertContext } from "../git/inert-config.js";
import { type GitContext, GitError, runGit } from "../git/process.js";
import { notesRefs } from "./store.js";

/** One check of `waymark doctor`. */
export type NotesCheck = { name: string; ok: boolean; detail: string; fix?: string };

const fetchRefspec = (remote: string) => `+${NOTES_REF}*:refs/notes/remotes/${remote}/waymark*`;
const escapeRegex = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

/** Every value of a key, in any scope (none: []). */
async function values(context: GitContext, key: string, scope: "--local" | null = null): Promise<string[]> {
  try {
    const out = await runGit(context, ["config", ...(scope ? [scope] : []), "--null", "--get-all", key]);
    return out.toString("utf8").split("\0").slice(0, -1);
  } catch (error) {
    if (error instanceof GitError && error.exitCode === 1) return [];
    throw error;
  }
}

/** git's reading of a boolean (default true when unset). */
async function enabled(context: GitContext, key: string): Promise<boolean> {
  const last = (await values(context, key)).at(-1);
  return last === undefined || /^(true|yes|on|1|)$/i.test(last.trim());
}

async function remotes(context: GitContext): Promise<string[]> {
  return (await runGit(context, ["remote"])).toString("utf8").split("\n").filter(Boolean);
}

/** Whether a notes.rewriteRef value (a ref or a glob) covers Waymark's ref. */
function covers(pattern: string): boolean {
  if (!pattern.includes("*")) return pattern === NOTES_REF;
  const [head = "", tail = ""] = pattern.split("*", 2);
  return NOTES_REF.startsWith(head) && NOTES_REF.endsWith(tail);
}

/** What is missing, as `git config` edits: [key, value] to add. */
async function missing(context: GitContext): Promise<{ add: [string, string][]; enable: string[] }> {
  const add: [string, string][] = [];
  if (!(await values(context, "notes.rewriteRef")).some(covers)) add.push(["notes.rewriteRef", NOTES_REF]);
  for (const remote of await remotes(context)) {
    const refspec = fetchRefspec(remote);
    if (!(await values(context, `remote.${remote}.fetch`)).includes(refspec)) add.push([`remote.${remote}.fetch`, refspec]);
  }
  const enable: string[] = [];
  for (const key of ["notes.rewrite.amend", "notes.rewrite.rebase"]) if (!(await enabled(context, key))) enable.push(key);
  return { add, enable };
}

async function repository(dir: string): Promise<GitContext | null> {
  const context = await inertContext(dir);
  try {
    const root = (await runGit(context, ["rev-parse", "--show-toplevel"])).toString("utf8").trim();
    return { ...context, cwd: root };
  } catch (error) {
    if (error instanceof GitError) return null;
    throw error;
  }
}

/**
 * Sets the repository up (or with `remove`, takes out what this set); returns what it did, for the
 * user. `dryRun`: says what it would do.
 */
export async function setupNotes(dir: string, options: { remove: boolean; dryRun: boolean }): Promise<string> {
  const context = await repository(dir);
  if (!context) return "Notes: not a git repository, nothing to set up (task records are kept as git notes only in one)\n";
  const verb = options.dryRun ? "would " : "";
  if (options.remove) {
    const removed: string[] = [];
    if ((await values(context, "notes.rewriteRef", "--local")).includes(NOTES_REF)) {
      if (!options.dryRun)
        await runGit(context, ["config", "--local", "--fixed-value", "--unset", "notes.rewriteRef", NOTES_REF]).catch(unsetAll(context));
      removed.push(`notes.rewriteRef ${NOTES_REF}`);
    }
    for (const remote of await remotes(context)) {
      const refspec = fetchRefspec(remote);
      if (!(await values(context, `remote.${remote}.fetch`, "--local")).includes(refspec)) continue;
      if (!options.dryRun) await runGit(context, ["config", "--local", "--unset", `remote.${remote}.fetch`, `^${escapeRegex(refspec)}$`]);
      removed.push(`remote.${remote}.fetch ${refspec}`);
    }
    return removed.length === 0
      ? "Notes: nothing of Waymark's in the repository's config\n"
      : `Notes: ${verb}remove from the repository's config: ${removed.join("; ")} (the notes themselves stay: git update-ref -d ${NOTES_REF})\n`;
  }
  const { add, enable } = await missing(context);
  if (!options.dryRun) {
    for (const [key, value] of add) await runGit(context, ["config", "--local", "--add", key, value]);
    for (const key of enable) await runGit(context, ["config", "--local", key, "true"]);
  }
  const done = [...add.map(([key, value]) => `${key} ${value}`), ...enable.map((key) => `${key} true`)];
  const head =
    done.length === 0
      ? "Notes: already set up (task records follow amend and rebase, and fetch brings the remote's)"
      : `Notes: ${verb}set in the repository's config: ${done.join("; ")}`;
  return `${head}. Push the records with your branch: git push origin ${NOTES_REF}\n`;
}

/** `git config --unset` with a fixed value needs git 2.37; older ones take it as a pattern. */
function unsetAll(context: GitContext) {
  return () => runGit(context, ["config", "--local", "--unset", "notes.rewriteRef", `^${escapeRegex(NOTES_REF)}$`]);
}

/** doctor's checks: rewrites copy the notes, fetches bring them, and whether this clone's notes were pushed. */
export async function checkNotes(dir: string): Promise<NotesCheck[]> {
  const context = await repository(dir);
  if (!context) return [];
  const { add, enable } = await missing(context);
  const checks: NotesCheck[] = [];
  const fix = "run: waymark notes setup (waymark init does it)";
  const rewrite = add.some(([key]) => key === "notes.rewriteRef");
  checks.push(
    rewrite || enable.length > 0
      ? {
          name: "notes",
          ok: false,
          detail: rewrite
            ? `notes.rewriteRef does not name ${NOTES_REF}: an amend or a rebase leaves the task records on the old commits`
            : `${enable.join(" and ")} turned off: those rewrites leave the task records on the old commits`,
          fix,
        }
      : { name: "notes", ok: true, detail: `amend and rebase copy the task records (${NOTES_REF}) to the new commits` },
  );
  const unfetched = add.filter(([key]) => key.startsWith("remote.")).map(([key]) => key.split(".")[1]);
  if (unfetched.length > 0)
    checks.push({ name: "notes", ok: false, detail: `fetching from ${unfetched.join(", ")} does not bring the task records`, fix });
  const refs = await notesRefs(context);
  const local = refs.find((r) => r.ref === NOTES_REF);
  if (local) {
    const pushed = refs.filter((r) => r.ref !== NOTES_REF && r.commit === local.commit).length > 0;
    checks.push(
      pushed
        ? { name: "notes", ok: true, detail: "this clone's task records are on the remote (as of the last fetch)" }
        : {
            name: "notes",
            ok: true,
            detail: `this clone has task records no remote has (as of the last fetch): git push origin ${NOTES_REF}`,
          },
    );
  }
  return checks;
}
