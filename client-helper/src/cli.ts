/**
 * @module cli
 * The helper's commands (`mcp`, `snapshot`, `changes`, `init`, `doctor`, `hook`, `summary`,
 * `verify`…), parsed with node:util parseArgs; exit codes 0/1/2 are a tested contract.
 */
import { readFile } from "node:fs/promises";
import { join, resolve as resolvePath } from "node:path";
import { parseArgs } from "node:util";
import { computeNetChanges, type PathChange } from "@waymark/protocol/attribution";
import { type FilesChanged, summarizeChanges } from "@waymark/protocol/files-changed";
import type { Changes, Snapshot } from "@waymark/protocol/wire";
import { checksumScanFromJson } from "./checksum.js";
import { EndpointError, noEndpointHelp, resolveEndpoint } from "./endpoint.js";
import { GitError } from "./git/process.js";
import type { ChecksumEntry, LocalChecksumSnapshot, LocalSnapshot } from "./local.js";
import { computeChanges, takeSnapshot, wireSnapshot } from "./snapshot.js";
import { readStdin } from "./stdin.js";
import { cacheRoot, readScanCache, scanCacheWriter } from "./store.js";
import { printable, printableJson } from "./terminal.js";
import { HELPER_VERSION } from "./version.js";

// The commands that talk to a server (mcp, summary, init, doctor, hook…) load their modules, and
// with them the MCP SDK, only when run: a snapshot or a version check starts in a fraction of the time.

export const EXIT_OK = 0;
export const EXIT_FAILURE = 1;
export const EXIT_USAGE = 2;

export const VERSION = HELPER_VERSION;

/**
 * How long `waymark mcp`, its session's opening answered from the last one's (./proxy/opening.ts),
 * waits before it loads the MCP SDK and connects, unless the client asks for more sooner: the
 * agent's own start (its first model request) then has the CPU.
 */
const SDK_LOAD_DELAY_MS = 2000;

const EXIT_CODES = `Exit codes:
  0  success
  1  runtime failure (git failed, a file could not be read, ...)
  2  usage error (unknown command or option, missing or invalid argument)`;

export const HELP = {
  main: `waymark ${VERSION} - local helper for Waymark: exact file changes of agent tasks, from git

Usage:
  waymark mcp [--url <endpoint>] [--token <token>] [--dir <dir>] [--timeout <seconds>]
  waymark snapshot [--dir <dir>]
  waymark changes --since <snapshot file | ->
  waymark init --url <endpoint> [--agent <list>] [--dry-run] [--remove]
  waymark doctor [--url <endpoint>]
  waymark summary [--workflow <id>] [--url <endpoint>] [--token <token>] [--link <url>]
  waymark verify <export.json> [--endpoint <url> | --key <file>] [--repo <dir>] [--json]
  waymark ci [--url <endpoint>] [--policy <file>] [--comment] [--code-quality <file>] [--json]
  waymark trace [--workflow <id>] [--url <endpoint>] [--token <token>] [--out <file>]
  waymark blame <file> [--rev <revision>] [--trace <export.agent-trace.json>]... [--workflow <id>]... [--json]
  waymark notes carry --from <commit> --onto <commit> [--since <commit>] [--dry-run] [--json]
  waymark notes setup [--remove] [--dry-run]
  waymark hook <event>
  waymark device [pair]
  waymark <command> --help
  waymark --help | --version

Commands:
  mcp       stdio MCP server for an agent: forwards every call to the Waymark endpoint,
            adds a snapshot to start_task and the file changes to complete_task
  snapshot  print a snapshot of a directory as JSON
  changes   print the changes since a snapshot as JSON, with the resolved A/M/D list
  init      set a project up for its agents: MCP server entry, instructions, hooks
  doctor    check endpoint, token, git, repository identity and the installed hooks
  hook      what the installed hooks run (reads the agent's hook payload on stdin)
  device    this machine's signing key; 'device pair' gets a code to approve it on the dashboard
  summary   print a workflow as Markdown for a pull request description
  verify    check a workflow's JSON export: its chain, its signature, every field against
            its events, and with --repo its committed changes against git
  ci        in a pull request's CI job: find its tasks, verify their record, apply the
            repository's policy (.waymark/policy.yml); job summary, annotations, outputs
  trace     print a workflow's Agent Trace export: which lines of each commit its tasks'
            agents wrote
  blame     for each line of a file at HEAD, the task, agent and model that wrote it
  notes     the records in the repository (refs/notes/waymark): 'notes carry' carries a
            branch's records onto the commits a squash or rebase merge made (run it in CI
            after the merge)

The endpoint is --url, else $WAYMARK_URL, else the one 'waymark init' kept in
~/.config/waymark/config.json; the base URL and its /mcp are the same endpoint. The token
goes to that endpoint only, never to one named in a repository's files.

Only paths, git modes and blob ids (SHA-1 of contents) leave the machine, never contents.
The repository is only read: index, HEAD, refs, stash and working tree stay untouched,
but for the task records the helper writes as git notes under refs/notes/waymark.

${EXIT_CODES}
`,
  mcp: `Usage: waymark mcp [--url <endpoint>] [--token <token>] [--dir <dir>] [--timeout <seconds>]

Runs a stdio MCP server for an agent. It lists the endpoint's tools (without the
helper-only inputs start_task.snapshot and complete_task.changes), forwards every call,
and attaches a snapshot to start_task and the changes since it to complete_task.

Options:
  --url <endpoint>     the Waymark endpoint, e.g. https://waymark.example.com (or its /mcp)
                       (default: $WAYMARK_URL, else the endpoint 'waymark init' kept)
  --token <token>      bearer token (default: $WAYMARK_TOKEN)
  --dir <dir>          project directory when the client gives no MCP root
                       (default: the working directory)
  --timeout <seconds>  deadline for each call to the endpoint (default: 30)
  -h, --help           show this help

Start snapshots are kept in memory and in $XDG_CACHE_HOME/waymark (or ~/.cache/waymark),
so a restart between start_task and complete_task loses nothing.

${EXIT_CODES}
`,
  snapshot: `Usage: waymark snapshot [--dir <dir>]

Prints a snapshot of <dir> (default: the working directory) as JSON on stdout: for a git
repository HEAD, branch and every dirty or untracked path with its HEAD and on-disk state;
elsewhere a checksum list of every file. Save it and pass it to 'waymark changes --since'.
A checksum list is also kept in $XDG_CACHE_HOME/waymark/scans (or ~/.cache/waymark/scans):
the next snapshot of the same directory re-hashes only files whose size, mtime, ctime, inode
or mode changed (git's rule for its index), and files changed too recently to tell.

Options:
  --dir <dir>  directory to snapshot (default: the working directory)
  -h, --help   show this help

${EXIT_CODES}
`,
  changes: `Usage: waymark changes --since <snapshot file | ->

Prints the changes since a snapshot from 'waymark snapshot' as JSON on stdout:
{ "changes": <what the helper sends to the edge>,
  "resolved": { "added": [...], "modified": [...], "deleted": [...], "renamed": [...], "files": [...] } }

Options:
  --since <file | ->  the snapshot file, or - to read it from stdin (required)
  -h, --help          show this help

${EXIT_CODES}
`,
  summary: `Usage: waymark summary [--workflow <id>] [--url <endpoint>] [--token <token>] [--link <url>] [--dir <dir>]

Prints the workflow as Markdown for a pull request description: per task its outcome, its
files with lines added (+) and removed (−), commits and branch, decisions, what needs a
reviewer, files outside the declared areas and the reviewers' feedback. It is the endpoint's
Markdown export (GET <endpoint>/api/workflows/<id>/export.md, read with the token), with a
link to the workflow's page under its heading.

Options:
  --workflow <id>  the workflow (default: the last one started through the helper in --dir)
  --url <endpoint> the Waymark endpoint (default: $WAYMARK_URL, else the one 'waymark init' kept)
  --token <token>  bearer token (default: $WAYMARK_TOKEN)
  --link <url>     the page link to include (default: the workflow's share link as it is now,
                   asked of the endpoint; none when it has no active one); --link none leaves
                   it out (a public PR: the link lets anyone read the workflow)
  --dir <dir>      project directory (default: the working directory)
  -h, --help       show this help

${EXIT_CODES}
`,
  trace: `Usage: waymark trace [--workflow <id>] [--url <endpoint>] [--token <token>] [--dir <dir>] [--out <file>]

Prints the workflow's Agent Trace export (the open format of github.com/cursor/agent-trace):
one record per task that committed work, at the task's end commit, with the line ranges its
agent's own edit tools wrote (contributor "ai", with the model) and those something else wrote
("unknown"). Lines no hook observed are in no range; the record's metadata counts them.
Read from GET <endpoint>/api/workflows/<id>/export.agent-trace.json with the token.

Options:
  --workflow <id>  the workflow (default: the last one started through the helper in --dir)
  --url <endpoint> the Waymark endpoint (default: $WAYMARK_URL, else the one 'waymark init' kept)
  --token <token>  bearer token (default: $WAYMARK_TOKEN)
  --dir <dir>      project directory (default: the working directory)
  --out <file>     write the export to a file instead of printing it
  -h, --help       show this help

${EXIT_CODES}
`,
  blame: `Usage: waymark blame <file> [--rev <revision>] [--trace <export.agent-trace.json>]... [--workflow <id>]... [--url <endpoint>] [--token <token>] [--dir <dir>] [--json]

For each line of <file> at HEAD (or --rev): the commit that last touched it (git blame), and
who wrote it there: "agent" (with its model), "others" (a person, a formatter, a command:
anything but the agent's own edit tools), "not observed" (in a task's change, but no hook saw
it written) or "not recorded" (nothing records it). The records are the repository's own
notes (refs/notes/waymark, written when each task completed and carried through merges by
'waymark notes carry'): with nothing but a clone it works offline. git runs with the
repository's command-bearing config made inert and without textconv.

Options:
  --rev <revision> the revision whose lines are blamed (default: HEAD)
  --trace <file>   an Agent Trace export ('waymark trace --out', or the page's Agent Trace
                   link) read besides the notes; repeatable
  --workflow <id>  a workflow whose records to read from the endpoint besides the notes;
                   repeatable (default, when the repository has no Waymark notes: the last
                   workflow started through the helper in --dir)
  --url <endpoint> the Waymark endpoint (default: $WAYMARK_URL, else the one 'waymark init' kept)
  --token <token>  bearer token (default: $WAYMARK_TOKEN)
  --dir <dir>      project directory (default: the working directory)
  --json           print the lines' authorship as JSON (without their text)
  -h, --help       show this help

${EXIT_CODES}
`,
  notes: `Usage: waymark notes carry --from <commit> --onto <commit> [--since <commit>] [--dir <dir>] [--dry-run] [--json]
       waymark notes setup [--remove] [--dir <dir>] [--dry-run]

The records of a task live in the repository as git notes (refs/notes/waymark), attached to its
commits. A squash merge or a rebase merge made by the platform (GitHub, GitLab) makes new
commits, with no note: run this once after the merge, in CI, to carry the branch's records
onto them, then push the notes (git push origin refs/notes/waymark).

'notes setup' (part of 'waymark init') sets the repository's config so that amend and rebase
copy the records to the new commits (notes.rewriteRef) and every fetch brings the remote's
(a fetch refspec per remote, into refs/notes/remotes/<remote>/waymark); --remove takes it out.

Each line the merge's commits introduced is carried back to --from through git's diff and
gets the writer 'waymark blame' gives it there; a line that cannot be carried back (a conflict
resolved in the merge) stays nobody's. A merge commit or a fast-forward keeps the branch's
commits and their notes: nothing to carry.

Options:
  --from <commit>   the branch's last commit (the pull request's head)
  --onto <commit>   the merge's result on the target branch
  --since <commit>  the target branch before the merge (the merge made exactly since..onto);
                    without it a rebase merge is recognised by its commits' subjects, and
                    anything else is taken as one commit (a squash, a cherry-pick)
  --dir <dir>       the repository (default: the working directory)
  --dry-run         report what would be carried, write nothing
  --json            print the report as JSON
  -h, --help        show this help

${EXIT_CODES}
`,
} as const;

class UsageError extends Error {}

export type Resolution = FilesChanged & { files: PathChange[] };

/** The A/M/D list the edge will record for these observations (the shared attribution rule). */
export function resolveChanges(start: Snapshot, changes: Changes): Resolution {
  const files = computeNetChanges(start, changes);
  return { ...summarizeChanges(files), files };
}

type Io = {
  stdout: (text: string | Buffer) => void;
  stderr: (text: string) => void;
  stdin: () => Promise<string>;
};

const defaultIo: Io = {
  stdout: (text) => process.stdout.write(text),
  stderr: (text) => process.stderr.write(text),
  stdin: readStdin,
};

type Parsed = { help: boolean; get: (name: string) => string | undefined };

/** Every option of every command takes a string value, apart from --help. */
function parse(command: keyof typeof HELP, args: string[], names: string[]): Parsed {
  const options: Record<string, { type: "string" | "boolean"; short?: string }> = { help: { type: "boolean", short: "h" } };
  for (const name of names) options[name] = { type: "string" };
  try {
    const { values } = parseArgs({
      args,
      options,
      allowPositionals: false,
      strict: true,
    });
    const record = values as Record<string, string | boolean | undefined>;
    return {
      help: record.help === true,
      get: (name) => {
        const value = record[name];
        return typeof value === "string" ? value : undefined;
      },
    };
  } catch (error) {
    throw new UsageError(`${error instanceof Error ? error.message : String(error)}\nSee 'waymark ${command} --help'.`);
  }
}

function isGitSnapshot(value: unknown): value is LocalSnapshot {
  if (!value || typeof value !== "object") return false;
  const v = value as Record<string, unknown>;
  return v.type === "git" && typeof v.root === "string" && Array.isArray(v.dirty) && (v.head === null || typeof v.head === "string");
}

async function readSince(source: string, io: Io): Promise<LocalSnapshot> {
  let text: string;
  try {
    text = source === "-" ? await io.stdin() : await readFile(source, "utf8");
  } catch (error) {
    throw new UsageError(`cannot read --since ${source}: ${error instanceof Error ? error.message : String(error)}`);
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new UsageError(`--since ${source} is not JSON; pass the output of 'waymark snapshot'`);
  }
  if ((value as { type?: unknown } | null)?.type === "checksum") {
    const scan = checksumScanFromJson(value);
    if (typeof scan === "string") throw new UsageError(`--since ${source} is not a snapshot from 'waymark snapshot': ${scan}`);
    return scan;
  }
  if (!isGitSnapshot(value)) throw new UsageError(`--since ${source} is not a snapshot from 'waymark snapshot'`);
  return value;
}

function json(value: unknown): string {
  return `${JSON.stringify(value, null, 2)}\n`;
}

/**
 * A snapshot as JSON. A checksum list holds an entry per file (at 100,000 files, tens of MB
 * indented), so its entries are written one per line, compactly, in pieces of about 64 KiB
 * (each encoded once, for stdout and the scan cache alike); the rest is indented as usual.
 */
function writeSnapshotJson(snapshot: LocalChecksumSnapshot, write: (bytes: Buffer) => void): void {
  const { paths, entries, ...rest } = snapshot;
  let piece = `${JSON.stringify(rest, null, 2).slice(0, -2)},\n  "entries": {`;
  let separator = "\n";
  for (let index = 0; index < paths.length; index++) {
    piece += `${separator}    ${jsonString(paths[index] as string)}: ${entryJson(entries[index] as ChecksumEntry)}`;
    separator = ",\n";
    if (piece.length > 65_536) {
      write(Buffer.from(piece));
      piece = "";
    }
  }
  write(Buffer.from(`${piece}${separator === "\n" ? "" : "\n  "}}\n}\n`));
}

/** Characters JSON.stringify escapes in a string (and lone surrogates). */
const JSON_ESCAPED = /["\\\u0000-\u001f\ud800-\udfff]/;

function jsonString(text: string): string {
  return JSON_ESCAPED.test(text) ? JSON.stringify(text) : `"${text}"`;
}

/**
 * JSON.stringify of a scan's entry, written out. Its mode and blob id need no escaping: a scan
 * computes them, and one read back from JSON was checked against their formats.
 */
function entryJson(entry: ChecksumEntry): string {
  const { mode, blob, size, mtimeMs, ctimeMs, ino } = entry;
  const stat = `${ctimeMs === undefined ? "" : `,"ctimeMs":${ctimeMs}`}${ino === undefined ? "" : `,"ino":${ino}`}`;
  return `{"mode":"${mode}","blob":"${blob}","size":${size},"mtimeMs":${mtimeMs}${stat}}`;
}

/** The command's endpoint (--url, WAYMARK_URL, the user-level config); a usage error when none or a bad one. */
async function endpointOf(args: Parsed, command: keyof typeof HELP) {
  try {
    const resolved = await resolveEndpoint(args.get("url"));
    if (resolved) return resolved.endpoint;
  } catch (error) {
    if (error instanceof EndpointError) throw new UsageError(error.message);
    throw error;
  }
  throw new UsageError(`${noEndpointHelp()}\nSee 'waymark ${command} --help'.`);
}

/** --workflow, else the last workflow started through the helper in --dir. */
async function workflowOf(args: Parsed, mcpUrl: string): Promise<string> {
  const given = args.get("workflow");
  if (given) return given;
  const dir = resolvePath(args.get("dir") ?? process.cwd());
  const { lastWorkflow } = await import("./summary-command.js");
  const last = await lastWorkflow(cacheRoot(), mcpUrl, dir);
  if (!last) throw new UsageError(`--workflow is required: no workflow was started through the helper in ${dir}`);
  return last.workflow_id;
}

/** `waymark blame`: records from --trace files (offline), else from the endpoint for each --workflow (or the last one). */
async function blame(rest: string[], io: Io): Promise<number> {
  let parsed: ReturnType<typeof parseBlameArgs>;
  try {
    parsed = parseBlameArgs(rest);
  } catch (error) {
    throw new UsageError(`${error instanceof Error ? error.message : String(error)}\nSee 'waymark blame --help'.`);
  }
  const { values, positionals } = parsed;
  if (values.help) {
    io.stdout(HELP.blame);
    return EXIT_OK;
  }
  const [file, ...extra] = positionals;
  if (!file || extra.length > 0) throw new UsageError("blame takes one <file>\nSee 'waymark blame --help'.");
  if (values.trace.length > 0 && values.workflow.length > 0)
    throw new UsageError("--trace and --workflow: the records come from files or from the endpoint, not both\nSee 'waymark blame --help'.");
  const dir = resolvePath(values.dir ?? process.cwd());
  const blameCommand = await import("./blame-command.js");
  const { fetchAgentTrace } = await import("./trace-command.js");
  const { ExportFetchError } = await import("./export-fetch.js");
  try {
    let exports: string[] = [];
    if (values.trace.length > 0) exports = await blameCommand.readExports(values.trace);
    else if (values.workflow.length > 0 || !(await blameCommand.hasNotes(dir))) {
      const getters = { help: false, get: (name: string) => (name === "url" ? values.url : name === "dir" ? values.dir : undefined) };
      const endpoint = await endpointOf(getters, "blame");
      const workflows = values.workflow.length > 0 ? values.workflow : [await workflowOf(getters, endpoint.mcp)];
      const token = values.token ?? (process.env.WAYMARK_TOKEN || undefined);
      exports = await Promise.all(workflows.map((id) => fetchAgentTrace(endpoint.origin, id, token)));
    }
    const revision = values.rev ?? "HEAD";
    const scratchRoot = join(cacheRoot(), "scratch");
    io.stdout(await blameCommand.runBlame({ file, dir, exports, json: values.json, revision, scratchRoot }));
    return EXIT_OK;
  } catch (error) {
    if (error instanceof blameCommand.BlameUsageError) throw new UsageError(error.message);
    if (error instanceof ExportFetchError || error instanceof GitError) {
      io.stderr(`waymark blame: ${error.message.trim()}\n`);
      return EXIT_FAILURE;
    }
    throw error;
  }
}

/** `waymark notes carry`: the branch's records onto the commits a merge made (./notes/carry.ts). */
async function notes(rest: string[], io: Io): Promise<number> {
  const [sub, ...args] = rest;
  if (sub === undefined || sub === "-h" || sub === "--help") {
    (sub === undefined ? io.stderr : io.stdout)(HELP.notes);
    return sub === undefined ? EXIT_USAGE : EXIT_OK;
  }
  if (sub === "setup") return notesSetup(args, io);
  if (sub !== "carry") throw new UsageError(`unknown notes command ${JSON.stringify(sub)}\nSee 'waymark notes --help'.`);
  let values: ReturnType<typeof parseCarryArgs>["values"];
  try {
    values = parseCarryArgs(args).values;
  } catch (error) {
    throw new UsageError(`${error instanceof Error ? error.message : String(error)}\nSee 'waymark notes --help'.`);
  }
  if (values.help) {
    io.stdout(HELP.notes);
    return EXIT_OK;
  }
  if (!values.from || !values.onto) throw new UsageError("notes carry needs --from and --onto\nSee 'waymark notes --help'.");
  const { carryNotes, CarryUsageError, carryReport } = await import("./notes/carry.js");
  try {
    const report = await carryNotes({
      dir: resolvePath(values.dir ?? process.cwd()),
      from: values.from,
      onto: values.onto,
      ...(values.since === undefined ? {} : { since: values.since }),
      scratchRoot: join(cacheRoot(), "scratch"),
      dryRun: values["dry-run"],
    });
    io.stdout(values.json ? json(report) : carryReport(report));
    return EXIT_OK;
  } catch (error) {
    if (error instanceof CarryUsageError) throw new UsageError(error.message);
    if (error instanceof GitError) {
      io.stderr(`waymark notes carry: ${error.message.trim()}\n`);
      return EXIT_FAILURE;
    }
    throw error;
  }
}

/** `waymark notes setup [--remove] [--dry-run]`: the repository's config for its notes (./notes/setup.ts). */
async function notesSetup(args: string[], io: Io): Promise<number> {
  let values: { help: boolean; remove: boolean; "dry-run": boolean; dir?: string };
  try {
    values = parseArgs({
      args,
      allowPositionals: false,
      strict: true,
      options: {
        help: { type: "boolean", short: "h", default: false },
        remove: { type: "boolean", default: false },
        "dry-run": { type: "boolean", default: false },
        dir: { type: "string" },
      },
    }).values;
  } catch (error) {
    throw new UsageError(`${error instanceof Error ? error.message : String(error)}\nSee 'waymark notes --help'.`);
  }
  if (values.help) {
    io.stdout(HELP.notes);
    return EXIT_OK;
  }
  const { setupNotes } = await import("./notes/setup.js");
  io.stdout(await setupNotes(resolvePath(values.dir ?? process.cwd()), { remove: values.remove, dryRun: values["dry-run"] }));
  return EXIT_OK;
}

function parseCarryArgs(args: string[]) {
  return parseArgs({
    args,
    allowPositionals: false,
    strict: true,
    options: {
      help: { type: "boolean", short: "h", default: false },
      from: { type: "string" },
      onto: { type: "string" },
      since: { type: "string" },
      dir: { type: "string" },
      "dry-run": { type: "boolean", default: false },
      json: { type: "boolean", default: false },
    },
  });
}

function parseBlameArgs(args: string[]) {
  return parseArgs({
    args,
    allowPositionals: true,
    strict: true,
    options: {
      help: { type: "boolean", short: "h", default: false },
      trace: { type: "string", multiple: true, default: [] },
      workflow: { type: "string", multiple: true, default: [] },
      url: { type: "string" },
      token: { type: "string" },
      dir: { type: "string" },
      rev: { type: "string" },
      json: { type: "boolean", default: false },
    },
  });
}

async function run(argv: string[], io: Io): Promise<number> {
  const [command, ...rest] = argv;
  switch (command) {
    case undefined:
      io.stderr(HELP.main);
      return EXIT_USAGE;
    case "-h":
    case "--help":
    case "help":
      io.stdout(HELP.main);
      return EXIT_OK;
    case "-v":
    case "--version":
      io.stdout(`${VERSION}\n`);
      return EXIT_OK;
    case "snapshot": {
      const args = parse("snapshot", rest, ["dir"]);
      if (args.help) {
        io.stdout(HELP.snapshot);
        return EXIT_OK;
      }
      const dir = resolvePath(args.get("dir") ?? process.cwd());
      const snapshot = await takeSnapshot(dir, {
        previous: await readScanCache(dir),
        progress: (line) => io.stderr(`${line}\n`),
      });
      if (snapshot.type !== "checksum") {
        io.stdout(json(snapshot));
        return EXIT_OK;
      }
      // A checksum scan is kept for the next one, which then hashes only files that changed.
      const cache = scanCacheWriter(dir);
      writeSnapshotJson(snapshot, (bytes) => {
        io.stdout(bytes);
        cache.write(bytes);
      });
      cache.commit();
      return EXIT_OK;
    }
    case "changes": {
      const args = parse("changes", rest, ["since"]);
      if (args.help) {
        io.stdout(HELP.changes);
        return EXIT_OK;
      }
      const source = args.get("since");
      if (source === undefined) throw new UsageError("--since is required\nSee 'waymark changes --help'.");
      const since = await readSince(source, io);
      const changes = await computeChanges(since, {
        progress: (line) => io.stderr(`${line}\n`),
      });
      const resolved = resolveChanges(wireSnapshot(since), changes);
      const files = resolved.files.map(({ path, status, committed }) => ({
        path,
        status,
        committed,
      }));
      io.stdout(json({ changes, resolved: { ...resolved, files } }));
      return EXIT_OK;
    }
    case "summary": {
      const args = parse("summary", rest, ["workflow", "url", "token", "link", "dir"]);
      if (args.help) {
        io.stdout(HELP.summary);
        return EXIT_OK;
      }
      const endpoint = await endpointOf(args, "summary");
      const workflowId = await workflowOf(args, endpoint.mcp);
      const { fetchSummary } = await import("./summary-command.js");
      const { ExportFetchError } = await import("./export-fetch.js");
      const linkOption = args.get("link");
      const token = args.get("token") ?? (process.env.WAYMARK_TOKEN || undefined);
      const link = linkOption === "none" ? null : (linkOption ?? "current");
      return fetchSummary({
        origin: endpoint.origin,
        token,
        workflowId,
        link,
        note: (text) => io.stderr(`waymark summary: ${text}\n`),
      }).then(
        (markdown) => {
          io.stdout(markdown);
          return EXIT_OK;
        },
        (error: unknown) => {
          if (!(error instanceof ExportFetchError)) throw error;
          io.stderr(`waymark summary: ${error.message}\n`);
          return EXIT_FAILURE;
        },
      );
    }
    case "trace": {
      const args = parse("trace", rest, ["workflow", "url", "token", "dir", "out"]);
      if (args.help) {
        io.stdout(HELP.trace);
        return EXIT_OK;
      }
      const endpoint = await endpointOf(args, "trace");
      const workflowId = await workflowOf(args, endpoint.mcp);
      const { runTrace } = await import("./trace-command.js");
      const { ExportFetchError } = await import("./export-fetch.js");
      const token = args.get("token") ?? (process.env.WAYMARK_TOKEN || undefined);
      const out = args.get("out");
      return runTrace({ origin: endpoint.origin, workflowId, token, ...(out === undefined ? {} : { out }) }, io.stdout).then(
        () => EXIT_OK,
        (error: unknown) => {
          if (!(error instanceof ExportFetchError)) throw error;
          io.stderr(`waymark trace: ${error.message}\n`);
          return EXIT_FAILURE;
        },
      );
    }
    case "blame":
      return blame(rest, io);
    case "notes":
      return notes(rest, io);
    case "verify": {
      const { runVerify } = await import("./verify-command.js");
      return runVerify(rest, { stdout: io.stdout, stderr: io.stderr });
    }
    case "ci": {
      const { runCi } = await import("./ci/ci-command.js");
      return runCi(rest, { stdout: io.stdout, stderr: io.stderr, env: process.env, cwd: process.cwd() });
    }
    case "commit-trailer": {
      // Run by the prepare-commit-msg hook of 'waymark init --commit-trailer': never fails a commit.
      const [messageFile, source] = rest;
      if (messageFile) {
        const { addTaskTrailer } = await import("./init/commit-trailer.js");
        await addTaskTrailer(messageFile, process.cwd(), source).catch(() => {});
      }
      return EXIT_OK;
    }
    case "mcp": {
      const args = parse("mcp", rest, ["url", "token", "dir", "timeout"]);
      if (args.help) {
        io.stdout(HELP.mcp);
        return EXIT_OK;
      }
      const url = (await endpointOf(args, "mcp")).mcp;
      const timeout = Number(args.get("timeout") ?? "30");
      if (!Number.isFinite(timeout) || timeout <= 0) throw new UsageError("--timeout must be a positive number of seconds");
      const dir = args.get("dir");
      const token = args.get("token") ?? (process.env.WAYMARK_TOKEN || undefined);
      // The client's opening is answered from the last session's while the SDK loads (./proxy/opening.ts).
      const { OpeningFront, openingFile } = await import("./proxy/opening.js");
      const opening = OpeningFront.start(openingFile(cacheRoot(), { url, version: VERSION, token }), {
        log: (line) => io.stderr(`${line}\n`),
      });
      await opening.needed(SDK_LOAD_DELAY_MS);
      const [{ runMcp }, { ensureLauncher }] = await Promise.all([import("./mcp.js"), import("./hooks/launcher.js")]);
      // The next session's MCP server and hooks then start this helper without npm.
      void ensureLauncher(VERSION);
      await runMcp(
        {
          url,
          token,
          dir: dir === undefined ? undefined : resolvePath(dir),
          timeoutMs: timeout * 1000,
          version: VERSION,
          // Through io: what the proxy logs (paths, an endpoint's error text) is made printable too.
          log: (line) => io.stderr(`${line}\n`),
        },
        opening,
      );
      return EXIT_OK;
    }
    default: {
      const setup = await import("./init/commands.js");
      if (setup.isSetupCommand(command)) return setup.runSetupCommand(command, rest, io, VERSION);
      throw new UsageError(`unknown command ${JSON.stringify(command)}\nSee 'waymark --help'.`);
    }
  }
}

/**
 * What a command prints, made safe for a terminal (./terminal.ts): the text of other parties (an
 * endpoint, a workflow) never reaches it raw. The MCP server's stdout is its protocol, and a
 * hook's stdout the JSON its agent reads: both stay as they are.
 */
function safeIo(io: Io, command: string | undefined): Io {
  const text = (write: (text: string) => void) => (value: string | Buffer) => write(printable(value.toString()));
  const stderr = text(io.stderr);
  if (command === "mcp" || command === "hook") return { ...io, stderr };
  if (command === "snapshot" || command === "changes") {
    return {
      ...io,
      stderr,
      stdout: (value) => io.stdout(typeof value === "string" ? printableJson(value) : Buffer.from(printableJson(value.toString()))),
    };
  }
  return { ...io, stderr, stdout: text(io.stdout) };
}

/** Runs one command line and returns its exit code; never throws. */
export async function main(argv: string[], unsafeIo: Io = defaultIo): Promise<number> {
  const io = safeIo(unsafeIo, argv[0]);
  try {
    return await run(argv, io);
  } catch (error) {
    if (error instanceof UsageError) {
      io.stderr(`waymark: ${error.message}\n`);
      return EXIT_USAGE;
    }
    io.stderr(`waymark: ${error instanceof Error ? error.message : String(error)}\n`);
    return EXIT_FAILURE;
  }
}
