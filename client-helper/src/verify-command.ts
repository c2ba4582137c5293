/**
 * @module verify-command
 * `waymark verify <export.json> [--endpoint <url> | --key <file>] [--allowed-signers <file>]
 * [--account <name>] [--origin <url>] [--allow-unsigned] [--repo <dir> [--ref <rev>]] [--json]`: the check of a
 * workflow's JSON export (@waymark/protocol/verify) with the deployment's public keys fetched
 * from its well-known URL or read from a file (fully offline), the device keys the repository
 * pins (./verify-inputs), optionally against a clone of the repository (./verify-repo.ts; without
 * an export, `--repo` alone checks the repository's notes against git, ./verify-repo-report.ts),
 * reported in plain words: what passed, what a pass means and what it does not. Fail closed: a
 * signature that was not checked (no keys; figures labelled signed but no allowed signers) is a
 * failure unless `--allow-unsigned` says the caller accepts that, and then the report says
 * NOT CHECKED, never ok. Exit codes: 0 nothing found wrong, 1 a problem found (an export whose
 * JSON could mean two things included), 2 usage (no file, not JSON, not an export, unreadable keys).
 */
import { parseArgs } from "node:util";
import { SIGNING_KEYS_PATH } from "@waymark/protocol/statement";
import { checkExport, type ExportCheck } from "@waymark/protocol/verify";
import { ExportRefused, keysFromEndpoint, keysFromFile, readAllowedSigners, readExport, VerifyUsageError } from "./verify-inputs.js";
import type { RepoCheck } from "./verify-repo.js";
import { notesReport, repoCheck, repoFailed, repoLines, repoPassLine, scratchRoot } from "./verify-repo-report.js";

export interface VerifyIo {
  stdout: (text: string) => void;
  stderr: (text: string) => void;
}

export const VERIFY_HELP = `Usage: waymark verify <export.json> [--endpoint <url> | --key <file>] [--allowed-signers <file>]
                      [--account <name>] [--origin <url>] [--allow-unsigned] [--repo <dir> [--ref <rev>]] [--json]
       waymark verify --repo <dir> [--ref <rev>] [--since <rev>] [--allow-unsigned] [--json]

Checks a workflow's JSON export (the page's JSON link, or GET /api/workflows/<id>/export.json
with a read token) and says exactly what a pass means:
  json       the file means the same to every JSON parser: no member twice, no half
             surrogate pairs, numbers written as the deployment writes them
  signature  the statement at the end of the export was signed by the deployment, with a key
             that was not compromised, inside the period that key signed in: for this
             workflow, exactly these events and the chain head they end on, the account and
             the deployment's origin, and the content of every other member
  chain      every event's hash covers the one before it and the event itself
  content    the workflow, tasks, decisions, issues, milestones, totals and feedback are
             rebuilt from the events and compared field by field
  devices    every figure labelled "computed and signed" is checked here: the device's
             signature over its data, its key in the allowed signers, and the figure being
             what the edge's rule makes of the signed data
  git        with --repo: each task is checked against the branch reviewed (HEAD, or --ref):
             on it, its committed files, renames, line counts and commits are re-derived
             between its recorded start and end commits; not on it (a squash or rebase
             merge, an amend, a rebase), against the commits that hold its record there
             (the repository's notes), and said how it was mapped. Every task is decided,
             or the check fails: a commit rewritten or missing with nothing on the branch
             holding its record fails, and so does a difference the record cannot decide

Options:
  --endpoint <url>          the Waymark deployment that wrote the export: its public keys
                            are read from <url>${SIGNING_KEYS_PATH}
  --key <file>              the deployment's public keys in a file (that document, or one
                            key as a JWK), for a check without any network
  --allowed-signers <file>  the device keys to trust (default: .waymark/allowed-signers
                            of the --repo clone or of the repository you are in; one line
                            per key, as \`waymark device\` prints it)
  --account <name>          require the record to be this account's (its name, or the
                            sha256: digest the report prints)
  --origin <url>            require the export to be issued by this deployment
  --allow-unsigned          accept what could not be checked (no keys; figures labelled signed
                            without allowed signers): reported as NOT CHECKED, exit 0
  --repo <dir>              a clone of the repository the workflow ran in; without an export
                            file, the tasks its notes (refs/notes/waymark) name are checked
                            against git, offline (the notes are not signed: --allow-unsigned)
  --ref <rev>               the branch reviewed (default: HEAD)
  --since <rev>             without an export: only the notes on commits after this one (a
                            pull request's range)
  --json                    print the findings as JSON
  -h, --help                show this help

A pass proves that the deployment recorded these events for this account, that this export
follows from them, and that each figure reported as checked was computed and signed by a device
the repository trusts; it does not prove that the agent told the truth (see docs/verification.md).

Exit codes:
  0  nothing wrong was found, and everything was checked (or --allow-unsigned)
  1  a problem was found (each is named), something was not checked, or the JSON was refused
  2  usage error (no file, not JSON, not a Waymark export, keys or signers that cannot be read)
`;

function parse(args: string[]) {
  try {
    return parseArgs({
      args,
      allowPositionals: true,
      strict: true,
      options: {
        endpoint: { type: "string" },
        key: { type: "string" },
        "allowed-signers": { type: "string" },
        account: { type: "string" },
        origin: { type: "string" },
        "allow-unsigned": { type: "boolean" },
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

/**
 * `waymark verify --repo <dir> [--ref <rev>] [--since <rev>]`: the repository's notes against git,
 * no export. The notes are not signed: a pass needs --allow-unsigned, as any check that could not
 * reach the deployment's signature does.
 */
async function verifyNotes(
  values: { repo?: string; ref?: string; since?: string; json?: boolean; "allow-unsigned"?: boolean },
  io: VerifyIo,
): Promise<number> {
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
  const { text, failed } = notesReport(repo, values["allow-unsigned"] === true);
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
  if (values.origin !== undefined && !URL.canParse(values.origin)) {
    throw new VerifyUsageError(`--origin must be a URL like https://waymark.example.com, got ${JSON.stringify(values.origin)}`);
  }
  let document: unknown;
  try {
    document = await readExport(file);
  } catch (error) {
    if (!(error instanceof ExportRefused)) throw error;
    if (values.json) io.stdout(`${JSON.stringify({ ok: false, refused: error.message }, null, 2)}\n`);
    io.stderr(`${error.message}\nNOT OK: do not rely on this file.\n`);
    return 1;
  }
  const keyed = values.key !== undefined ? { keys: await keysFromFile(values.key), url: values.key } : null;
  const { keys, url: keySource } =
    keyed ?? (values.endpoint !== undefined ? await keysFromEndpoint(values.endpoint) : { keys: null, url: "" });
  const allowed = await readAllowedSigners(values["allowed-signers"], values.repo, process.cwd());
  const check = await checkExport(document, {
    keys,
    signers: allowed?.signers ?? null,
    ...(values.account !== undefined ? { account: values.account } : {}),
    ...(values.origin !== undefined ? { origin: values.origin } : {}),
  });
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
  const unchecked = uncheckedParts(check);
  const allowUnsigned = values["allow-unsigned"] === true;
  const failed = check.problems.length > 0 || repoFailed(repo) || (unchecked.length > 0 && !allowUnsigned);
  const sources = { keys: keySource, signers: allowed?.file ?? null };
  if (values.json) {
    io.stdout(
      `${JSON.stringify({ ok: !failed, not_checked: unchecked, export: check, keys: keySource || null, allowed_signers: sources.signers, repository: repo }, null, 2)}\n`,
    );
    return failed ? 1 : 0;
  }
  (failed ? io.stderr : io.stdout)(report(check, sources, repo, { failed, unchecked, allowUnsigned }));
  return failed ? 1 : 0;
}

/** What was not checked, in words: each is a failure unless --allow-unsigned. */
function uncheckedParts(check: ExportCheck): string[] {
  const parts: string[] = [];
  if (check.signature.status === "not_checked") parts.push("the deployment's signature (no keys: pass --endpoint <url> or --key <file>)");
  if (check.provenance.status === "not_checked") {
    parts.push(
      "the device signatures behind the figures labelled computed and signed (no allowed signers: commit .waymark/allowed-signers or pass --allowed-signers <file>)",
    );
  }
  return parts;
}

const plural = (n: number, one: string, many = `${one}s`) => `${n} ${n === 1 ? one : many}`;

function signatureLine(check: ExportCheck, keySource: string): string {
  const s = check.signature;
  if (s.status === "ok") {
    const period =
      s.not_before === null && s.not_after === null
        ? "no period published"
        : `signing from ${s.not_before ?? "…"} to ${s.not_after ?? "now"}`;
    return `ok: signed ${s.issued_at} with key ${s.kid}, the ${s.key_status} key of ${keySource} (${period})`;
  }
  if (s.status === "not_checked") return "NOT CHECKED: no keys given (pass --endpoint <url> or --key <file>)";
  if (s.status === "missing") return "FAILED: the export carries no signed statement";
  return "FAILED (see below)";
}

function bindingLine(check: ExportCheck): string {
  const { account, origin } = check.binding;
  if (account === null && origin === null) return "not named: the statement (an older version) does not say whose record it is";
  return `account ${account ?? "not named"}, issued by ${origin ?? "an origin not named"}${check.signature.status === "ok" ? "" : " (as the unchecked statement says)"}`;
}

function provenanceLines(check: ExportCheck, signers: string | null): string[] {
  const p = check.provenance;
  const part = (counts: Record<string, number>, what: string) => Object.entries(counts).map(([label, n]) => `    ${what}: ${label} ×${n}`);
  const lines = [...part(p.files, "files"), ...part(p.usage, "usage")];
  if (lines.length === 0) return [];
  const how =
    p.status === "checked"
      ? `devices: each figure labelled computed and signed checked against ${plural(p.payloads, "device-signed payload")} and the allowed signers in ${signers}`
      : p.status === "not_checked"
        ? "devices: NOT CHECKED: figures are labelled computed and signed, but no allowed signers were given (.waymark/allowed-signers or --allowed-signers <file>): the labels are the server's word"
        : "devices: no figure is labelled computed and signed";
  return [`  ${how}`, ...lines];
}

interface Outcome {
  failed: boolean;
  unchecked: string[];
  allowUnsigned: boolean;
}

function report(check: ExportCheck, sources: { keys: string; signers: string | null }, repo: RepoCheck | null, outcome: Outcome): string {
  const c = check.counts;
  const lines = [
    `Export of workflow ${check.workflow.id} ${JSON.stringify(check.workflow.name)}: ${plural(check.events, "event")}${
      check.head ? `, chain head ${check.head}` : ""
    }`,
    `  signature: ${signatureLine(check, sources.keys)}`,
    `  record of: ${bindingLine(check)}`,
    `  chain:     ${check.head ? "ok: every event's hash covers the one before it and the event itself" : "FAILED (see below)"}`,
    `  content:   ${
      check.problems.length === 0
        ? `ok: the workflow, ${plural(c.tasks, "task")}, ${plural(c.decisions, "decision")}, ${plural(c.issues, "issue")}, ${plural(
            c.milestones,
            "milestone",
          )}, the totals and ${plural(c.feedback, "feedback item")} follow from the events`
        : "see below"
    }`,
    ...provenanceLines(check, sources.signers),
  ];
  for (const uncovered of check.not_covered) lines.push(`  not covered: ${uncovered}`);
  if (repo) lines.push(...repoLines(repo));
  if (check.problems.length > 0) {
    lines.push(`${plural(check.problems.length + check.more_problems, "problem")} in the export:`);
    for (const problem of check.problems) lines.push(`  ${problem}`);
    if (check.more_problems > 0) lines.push(`  … and ${check.more_problems} more`);
  }
  const differs = repoFailed(repo);
  if (check.problems.length > 0) {
    lines.push("NOT OK: this file is not the record the deployment wrote, or does not follow from it: do not rely on it.");
  } else if (differs) {
    lines.push("NOT OK: the export is intact, but git does not agree with the record, or could not decide a task (see above).");
  } else if (outcome.unchecked.length > 0) {
    lines.push(
      outcome.allowUnsigned
        ? "NOT CHECKED (accepted with --allow-unsigned): nothing wrong was found in what was checked, but these were not checked:"
        : "NOT OK: not everything could be checked, and a check that did not run is not a pass (--allow-unsigned accepts that):",
    );
    for (const part of outcome.unchecked) lines.push(`  ${part}`);
    if (check.signature.status !== "ok")
      lines.push("Without the signature, nothing shows this deployment wrote the file: anyone can write a consistent one.");
  } else {
    lines.push(
      `ok: this deployment recorded these ${plural(check.events, "event")} for ${check.binding.account ?? "an account it does not name"}, and every other field of the export follows from them.`,
    );
    if (check.provenance.status === "checked") {
      lines.push(
        "Each figure reported checked above was computed and signed by a device key in the allowed signers, over exactly the data",
        "it follows from (anything running as that device's user could have signed too: docs/provenance.md).",
      );
    }
    lines.push("This does not prove that the agent told the truth: its outcomes and decisions are recorded as it reported them.");
    lines.push(repo ? repoPassLine(repo) : "`waymark verify --repo <clone>` checks the committed changes against git.");
  }
  return `${lines.join("\n")}\n`;
}
