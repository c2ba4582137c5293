/**
 * @module verify-command
 * `waymark verify <export.json> [--endpoint <url> | --key <file>] [--repo <dir>] [--json]`: the
 * check of a workflow's JSON export (@waymark/protocol/verify) with the deployment's public keys
 * fetched from its well-known URL or read from a file (fully offline), optionally against a clone
 * of the repository (./verify-repo.ts), reported in plain words: what passed, what a pass means
 * and what it does not. Exit codes: 0 nothing found wrong, 1 a problem found, 2 usage (no file,
 * not an export, keys that cannot be read).
 */
import { readFile } from "node:fs/promises";
import { parseArgs } from "node:util";
import { keyThumbprint, type PublishedKey, parsePublishedKeys, SIGNING_KEYS_PATH } from "@waymark/protocol/statement";
import { checkExport, type ExportCheck } from "@waymark/protocol/verify";
import type { RepoCheck } from "./verify-repo.js";
import { notesReport, repoCheck, repoFailed, repoLines, repoPassLine, scratchRoot } from "./verify-repo-report.js";

export interface VerifyIo {
  stdout: (text: string) => void;
  stderr: (text: string) => void;
}

export const VERIFY_HELP = `Usage: waymark verify <export.json> [--endpoint <url> | --key <file>] [--repo <dir> [--ref <rev>]] [--json]
       waymark verify --repo <dir> [--ref <rev>] [--since <rev>] [--json]

Checks a workflow's JSON export (the page's JSON link, or GET /api/workflows/<id>/export.json
with a read token) and says exactly what a pass means:
  chain      every event's hash covers the one before it and the event itself
  signature  the statement at the end of the export was signed by the deployment: for this
             workflow, exactly these events and the chain head they end on, and the content
             of every other member (with --endpoint or --key; otherwise not checked)
  content    the workflow, tasks, decisions, issues, milestones, totals and feedback are
             rebuilt from the events and compared field by field
  git        with --repo: each task is checked against the branch reviewed (HEAD, or --ref):
             on it, its committed files, renames, line counts and commits are re-derived
             between its recorded start and end commits; not on it (a squash or rebase
             merge, an amend, a rebase), against the commits that hold its record there
             (the repository's notes), and said how it was mapped. Every task is decided,
             or the check fails: a commit rewritten or missing with nothing on the branch
             holding its record fails, and so does a difference the record cannot decide

Options:
  --endpoint <url>  the Waymark deployment that wrote the export: its public keys are read
                    from <url>${SIGNING_KEYS_PATH}
  --key <file>      the deployment's public keys in a file (that document, or one key as a
                    JWK), for a check without any network
  --repo <dir>      a clone of the repository the workflow ran in; without an export file,
                    the tasks its notes (refs/notes/waymark) name are checked, offline
  --ref <rev>       the branch reviewed (default: HEAD)
  --since <rev>     without an export: only the notes on commits after this one (a pull
                    request's range)
  --json            print the findings as JSON
  -h, --help        show this help

A pass proves that the deployment recorded these events and that this export follows from
them; it does not prove that the agent told the truth (see docs/verification.md).

Exit codes:
  0  nothing wrong was found
  1  a problem was found (each is named)
  2  usage error (no file, not JSON, not a Waymark export, keys that cannot be read)
`;

export class VerifyUsageError extends Error {}

const FETCH_TIMEOUT_MS = 30_000;

/** The keys a `--key` file holds: the well-known document, a JWK or a list of JWKs (first current, the rest retired). */
export function keysFromFile(text: string, file: string): PublishedKey[] {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new VerifyUsageError(`--key ${file}: not JSON (give the document at ${SIGNING_KEYS_PATH}, or one public key as a JWK)`);
  }
  const list = Array.isArray(value) ? value : value !== null && typeof value === "object" && "keys" in value ? null : [value];
  try {
    if (list === null) return parsePublishedKeys(value);
    return parsePublishedKeys({
      keys: list.map((key: unknown, i) => {
        const jwk = key as { x?: unknown; kid?: unknown } | null;
        return {
          ...jwk,
          kid: jwk?.kid ?? (typeof jwk?.x === "string" ? keyThumbprint(jwk.x) : undefined),
          status: i === 0 ? "current" : "retired",
        };
      }),
    });
  } catch (error) {
    throw new VerifyUsageError(`--key ${file}: ${(error as Error).message}`);
  }
}

/** The deployment's published keys, read from its well-known URL. */
export async function keysFromEndpoint(endpoint: string): Promise<{ keys: PublishedKey[]; url: string }> {
  if (!URL.canParse(endpoint) || !/^https?:$/.test(new URL(endpoint).protocol)) {
    throw new VerifyUsageError(`--endpoint must be an http(s) URL, got ${JSON.stringify(endpoint)}`);
  }
  const url = new URL(SIGNING_KEYS_PATH, endpoint).href;
  let response: Response;
  try {
    response = await fetch(url, { signal: AbortSignal.timeout(FETCH_TIMEOUT_MS), redirect: "error" });
  } catch (error) {
    throw new VerifyUsageError(
      `cannot read the signing keys at ${url}: ${(error as Error).message} (check --endpoint, or pass --key <file>)`,
    );
  }
  if (!response.ok)
    throw new VerifyUsageError(`cannot read the signing keys at ${url}: HTTP ${response.status} (check --endpoint, or pass --key <file>)`);
  try {
    return { keys: parsePublishedKeys(await response.json()), url };
  } catch (error) {
    throw new VerifyUsageError(`the signing keys at ${url} are not a key document: ${(error as Error).message}`);
  }
}

function parse(args: string[]) {
  try {
    return parseArgs({
      args,
      allowPositionals: true,
      strict: true,
      options: {
        endpoint: { type: "string" },
        key: { type: "string" },
        repo: { type: "string" },
        ref: { type: "string" },
        since: { type: "string" },
        json: { type: "boolean" },
        help: { type: "boolean", short: "h" },
      },
    });
  } catch (error) {
    throw new VerifyUsageError(`${(error as Error).message}\nSee 'waymark verify --help'.`);
  }
}

/** Runs `waymark verify` with its arguments (after the command name); returns the exit code. */
export async function runVerify(args: string[], io: VerifyIo): Promise<number> {
  try {
    return await verify(args, io);
  } catch (error) {
    if (!(error instanceof VerifyUsageError)) throw error;
    io.stderr(`waymark: ${error.message}\n`);
    return 2;
  }
}

/** `waymark verify --repo <dir> [--ref <rev>] [--since <rev>]`: the repository's notes against git, no export. */
async function verifyNotes(values: { repo?: string; ref?: string; since?: string; json?: boolean }, io: VerifyIo): Promise<number> {
  const { checkNotesAgainstRepository } = await import("./verify-repo.js");
  const repo = await repoCheck(
    () =>
      checkNotesAgainstRepository(values.repo as string, {
        scratchRoot: scratchRoot(),
        ...(values.ref === undefined ? {} : { ref: values.ref }),
        ...(values.since === undefined ? {} : { since: values.since }),
      }),
    VerifyUsageError,
  );
  const { text, failed } = notesReport(repo);
  if (values.json) io.stdout(`${JSON.stringify({ ok: !failed, export: null, repository: repo }, null, 2)}\n`);
  else (failed ? io.stderr : io.stdout)(text);
  return failed ? 1 : 0;
}

async function verify(args: string[], io: VerifyIo): Promise<number> {
  const { values, positionals } = parse(args);
  if (values.help) {
    io.stdout(VERIFY_HELP);
    return 0;
  }
  const [file, ...extra] = positionals;
  if (extra.length > 0 || (file === undefined && values.repo === undefined))
    throw new VerifyUsageError(
      "verify takes one export file (or only --repo, to check the repository's notes)\nSee 'waymark verify --help'.",
    );
  if (file === undefined) return verifyNotes(values, io);
  if (values.since !== undefined) throw new VerifyUsageError("--since: only without an export file (the notes of a range of commits)");
  if (values.endpoint !== undefined && values.key !== undefined) throw new VerifyUsageError("give --endpoint or --key, not both");
  let text: string;
  try {
    text = await readFile(file, "utf8");
  } catch (error) {
    throw new VerifyUsageError(`cannot read ${file}: ${(error as Error).message}`);
  }
  let document: unknown;
  try {
    document = JSON.parse(text);
  } catch {
    throw new VerifyUsageError(`${file} is not JSON: pass a workflow's export.json`);
  }
  let keys: PublishedKey[] | null = null;
  let keySource = "";
  if (values.key !== undefined) {
    let keyText: string;
    try {
      keyText = await readFile(values.key, "utf8");
    } catch (error) {
      throw new VerifyUsageError(`cannot read --key ${values.key}: ${(error as Error).message}`);
    }
    keys = keysFromFile(keyText, values.key);
    keySource = values.key;
  } else if (values.endpoint !== undefined) {
    const fetched = await keysFromEndpoint(values.endpoint);
    keys = fetched.keys;
    keySource = fetched.url;
  }
  const check = checkExport(document, keys);
  if ("not_an_export" in check) throw new VerifyUsageError(check.not_an_export);
  let repo: RepoCheck | null = null;
  if (values.repo !== undefined) {
    const { checkAgainstRepository } = await import("./verify-repo.js");
    const { tasks, events } = document as { tasks?: unknown; events?: unknown };
    repo = await repoCheck(
      () =>
        checkAgainstRepository(Array.isArray(tasks) ? tasks : [], values.repo as string, {
          scratchRoot: scratchRoot(),
          workflowId: check.workflow.id,
          ...(Array.isArray(events) ? { events } : {}),
          ...(values.ref === undefined ? {} : { ref: values.ref }),
        }),
      VerifyUsageError,
    );
  }
  const failed = check.problems.length > 0 || repoFailed(repo);
  if (values.json) {
    io.stdout(`${JSON.stringify({ ok: !failed, export: check, keys: keySource || null, repository: repo }, null, 2)}\n`);
    return failed ? 1 : 0;
  }
  (failed ? io.stderr : io.stdout)(report(check, keySource, repo, failed));
  return failed ? 1 : 0;
}

const plural = (n: number, one: string, many = `${one}s`) => `${n} ${n === 1 ? one : many}`;

function signatureLine(check: ExportCheck, keySource: string): string {
  const s = check.signature;
  if (s.status === "ok") {
    return `ok: signed ${s.issued_at} with key ${s.kid}, the ${s.key_status} key of ${keySource}`;
  }
  if (s.status === "not_checked") return "NOT CHECKED: no keys given (pass --endpoint <url> or --key <file>)";
  if (s.status === "missing") return "FAILED: the export carries no signed statement";
  return "FAILED (see below)";
}

function provenanceLine(check: ExportCheck): string | null {
  const part = (counts: Record<string, number>, what: string) => {
    const entries = Object.entries(counts).map(([label, n]) => `${label} ×${n}`);
    return entries.length === 0 ? null : `${what}: ${entries.join(", ")}`;
  };
  const parts = [part(check.provenance.files, "files"), part(check.provenance.usage, "usage")].filter((p) => p !== null);
  return parts.length === 0 ? null : `${parts.join("; ")} (per task, the server's verdict on each device signature)`;
}

function report(check: ExportCheck, keySource: string, repo: RepoCheck | null, failed: boolean): string {
  const c = check.counts;
  const lines = [
    `Export of workflow ${check.workflow.id} ${JSON.stringify(check.workflow.name)}: ${plural(check.events, "event")}${
      check.head ? `, chain head ${check.head}` : ""
    }`,
    `  signature: ${signatureLine(check, keySource)}`,
    `  chain:     ${check.head ? "ok: every event's hash covers the one before it and the event itself" : "FAILED (see below)"}`,
    `  content:   ${
      check.problems.length === 0
        ? `ok: the workflow, ${plural(c.tasks, "task")}, ${plural(c.decisions, "decision")}, ${plural(c.issues, "issue")}, ${plural(
            c.milestones,
            "milestone",
          )}, the totals and ${plural(c.feedback, "feedback item")} follow from the events`
        : "see below"
    }`,
  ];
  const provenance = provenanceLine(check);
  if (provenance) lines.push(`  provenance: ${provenance}`);
  for (const uncovered of check.not_covered) lines.push(`  not covered: ${uncovered}`);
  if (repo) lines.push(...repoLines(repo));
  if (check.problems.length > 0) {
    lines.push(`${plural(check.problems.length + check.more_problems, "problem")} in the export:`);
    for (const problem of check.problems) lines.push(`  ${problem}`);
    if (check.more_problems > 0) lines.push(`  … and ${check.more_problems} more`);
  }
  if (failed) {
    lines.push(
      check.problems.length > 0
        ? "NOT OK: this file is not the record the deployment wrote, or does not follow from it: do not rely on it."
        : "NOT OK: the export is intact, but git does not agree with the record, or could not decide a task (see above).",
    );
  } else if (check.signature.status === "ok") {
    lines.push(
      `ok: this deployment recorded these ${plural(check.events, "event")}, and every other field of the export follows from them.`,
      "This does not prove that the agent told the truth: its outcomes and decisions are recorded as it reported them. A figure",
      "'computed and signed' was signed by a device the owner approved (anything running as the user on that device could sign too).",
    );
    lines.push(repo ? repoPassLine(repo) : "`waymark verify --repo <clone>` checks the committed changes against git.");
  } else {
    lines.push(
      "ok as far as it goes: the events chain up and every other field follows from them. The signature was NOT checked,",
      "so nothing shows this deployment wrote the file: anyone can write a consistent one. Pass --endpoint <url> or --key <file>.",
    );
  }
  return `${lines.join("\n")}\n`;
}
