/**
 * @module init/commands
 * The command lines of `waymark init`, `waymark doctor`, `waymark hook` and `waymark device`:
 * options, help, and exit codes (0 success, 1 failure, 2 usage error), in the style of the other
 * commands.
 */
import { resolve } from "node:path";
import { parseArgs } from "node:util";
import { HOOK_EVENTS } from "@waymark/protocol/agent-config";
import type { Agent } from "../agents/agent.js";
import { AGENTS, agentNamed } from "../agents/registry.js";
import { EndpointError, noEndpointHelp, parseEndpoint, resolveEndpoint } from "../endpoint.js";
import { installCommitTrailer } from "./commit-trailer.js";
import { runInit } from "./setup.js";

export const SETUP_COMMANDS = ["init", "doctor", "hook", "device"] as const;
export type SetupCommand = (typeof SETUP_COMMANDS)[number];

export function isSetupCommand(command: string | undefined): command is SetupCommand {
  return (SETUP_COMMANDS as readonly (string | undefined)[]).includes(command);
}

/** The agents as the help names them: `claude,cursor,codex`, `Claude Code, Cursor, Codex`… */
const NAMES = AGENTS.map((agent) => agent.name);
const LABELS = AGENTS.map((agent) => agent.label).join(", ");
const INSTRUCTION_FILES = AGENTS.map((agent) => agent.instructionsFile).join(", ");

export const SETUP_HELP: Record<SetupCommand, string> = {
  init: `Usage: waymark init --url <endpoint> [--agent ${NAMES.join(",")}] [--dir <dir>] [--dry-run] [--remove] [--commit-trailer] [--global-config] [--trust]

Sets the project up for the agents found (${LABELS}) or named with --agent:
the waymark MCP server entry (run from the endpoint's own helper tarball), a short
instructions block (${INSTRUCTION_FILES}) and the hooks that
record sessions and edits. Only Waymark's marked blocks and entries are written; a second
run changes nothing. No token is written: configurations read WAYMARK_TOKEN. The endpoint is
kept in ~/.config/waymark/config.json, where every waymark command finds it.

Options:
  --url <endpoint>  the Waymark endpoint, base URL or its /mcp (default: $WAYMARK_URL, else
                    the endpoint kept by an earlier init)
  --agent <list>    comma-separated: ${NAMES.join(", ")} (default: the agents found)
  --dir <dir>       the project (default: the repository of the working directory)
  --dry-run         print the unified diff of what would be written; write nothing
  --remove          take out everything init wrote (files come back byte for byte)
  --global-config   also write the files of yours outside the project (Codex's ~/.codex/config.toml)
                    without asking; without it, init asks on a terminal, and elsewhere leaves them
                    as they are and prints the change to make
  --trust           give the trust an agent asks for in its own UI, through the agent (Codex: trust
                    this project and Waymark's hooks exactly as init wrote them, as answering yes and
                    /hooks do; for headless setups); it writes into the agent's own config
  --commit-trailer  also install a git prepare-commit-msg hook that adds
                    "Waymark-Task: <open task>" to commit messages (opt-in; with --remove,
                    removes it; an existing hook of someone else's is never replaced)
  -h, --help        show this help
`,
  doctor: `Usage: waymark doctor [--url <endpoint>] [--dir <dir>]

Checks the endpoint (GET /health), the token (an authenticated tools/list), git and the
repository's identity, and the configuration init writes (server entry, instructions,
hooks running this helper version). Prints a fix for each failure; exit code 1 if any.

Options:
  --url <endpoint>  the Waymark endpoint (default: $WAYMARK_URL, else the endpoint 'waymark init'
                    kept; never one named in the project's files)
  --dir <dir>       the project (default: the working directory)
  -h, --help        show this help
`,
  device: `Usage: waymark device [pair] [--url <endpoint>] [--name <name>] [--new-key]

Shows this machine's device key: the Ed25519 key the helper signs the file changes and usage it
computes with, kept in ~/.config/waymark/device-key.json (readable by you only, never in a
repository). Created on first use, named after this machine unless --name says otherwise.

'waymark device pair' asks the endpoint (as the account of WAYMARK_TOKEN) for a one-time code:
enter it on the dashboard's Devices page, check that it shows the same fingerprint, and approve.
From then on this device's figures read "computed and signed" instead of "claimed by the client".

Options:
  --url <endpoint>  the Waymark endpoint (default: $WAYMARK_URL, else the endpoint 'waymark init' kept)
  --name <name>     name this device, also when its key exists (default: the machine's name)
  --new-key         move the current key aside and make a new one (after a revocation)
  -h, --help        show this help
`,
  hook: `Usage: waymark hook <${HOOK_EVENTS.join(" | ")}> [--agent ${NAMES.join("|")}] [--url <endpoint>]

What the hooks installed by 'waymark init' run: reads the agent's hook payload (JSON) on
stdin and answers in that agent's format. Never fails the agent: errors end with exit 0.
`,
};

type Io = { stdout: (text: string) => void; stderr: (text: string) => void; stdin: () => Promise<string> };

class SetupUsageError extends Error {}

function help(io: Io, command: SetupCommand): number {
  io.stdout(SETUP_HELP[command]);
  return 0;
}

function options(command: SetupCommand, args: string[], strings: string[], booleans: string[]) {
  const spec: Record<string, { type: "string" | "boolean"; short?: string }> = { help: { type: "boolean", short: "h" } };
  for (const name of strings) spec[name] = { type: "string" };
  for (const name of booleans) spec[name] = { type: "boolean" };
  try {
    const { values, positionals } = parseArgs({
      args,
      options: spec,
      allowPositionals: command === "hook" || command === "device",
      strict: true,
    });
    return { values: values as Record<string, string | boolean | undefined>, positionals };
  } catch (error) {
    throw new SetupUsageError(`${error instanceof Error ? error.message : String(error)}\nSee 'waymark ${command} --help'.`);
  }
}

function agentList(value: string | undefined): Agent[] | null {
  if (value === undefined) return null;
  const names = value
    .split(",")
    .map((name) => name.trim().toLowerCase())
    .filter((name) => name !== "");
  const agents: Agent[] = [];
  for (const name of names) {
    const agent = agentNamed(name);
    if (!agent) throw new SetupUsageError(`--agent: unknown agent ${JSON.stringify(name)} (known: ${NAMES.join(", ")})`);
    if (!agents.includes(agent)) agents.push(agent);
  }
  if (agents.length === 0) throw new SetupUsageError("--agent needs at least one agent name");
  return agents;
}

async function run(command: SetupCommand, args: string[], io: Io, version: string): Promise<number> {
  const env = process.env;
  switch (command) {
    case "init": {
      const { values } = options(command, args, ["url", "agent", "dir"], ["dry-run", "remove", "commit-trailer", "global-config", "trust"]);
      if (values.help) return help(io, "init");
      const dir = resolve((values.dir as string | undefined) ?? process.cwd());
      // Removal recognises Waymark's blocks and entries by their marks, whatever endpoint they name.
      const resolved = await endpointOf(values.url as string | undefined, env);
      const endpoint = resolved?.endpoint ?? (values.remove ? parseEndpoint("http://localhost") : undefined);
      if (!endpoint) throw new SetupUsageError(`${noEndpointHelp(env)}\nSee 'waymark init --help'.`);
      try {
        const code = await runInit({
          dir,
          endpoint,
          version,
          agents: agentList(values.agent as string | undefined),
          dryRun: values["dry-run"] === true,
          remove: values.remove === true,
          globalConfig: values["global-config"] === true,
          trust: values.trust === true,
          confirm: process.stdin.isTTY && process.stdout.isTTY ? askOnTerminal : null,
          env,
          out: io.stdout,
        });
        // Opt-in: the Waymark-Task commit trailer hook (init/commit-trailer).
        if (values["commit-trailer"] === true && values["dry-run"] !== true)
          io.stdout(await installCommitTrailer(dir, version, values.remove === true));
        return code;
      } catch (error) {
        if (error instanceof EndpointError) throw new SetupUsageError(error.message);
        throw error;
      }
    }
    case "doctor": {
      const { values } = options(command, args, ["url", "dir"], []);
      if (values.help) return help(io, "doctor");
      // Loaded here: the doctor talks to the endpoint through the MCP SDK, which `waymark hook` (run on every edit) never needs.
      const { runDoctor } = await import("./doctor.js");
      return runDoctor({
        dir: resolve((values.dir as string | undefined) ?? process.cwd()),
        endpoint: await endpointOf(values.url as string | undefined, env),
        token: env.WAYMARK_TOKEN || undefined,
        version,
        env,
        out: io.stdout,
      });
    }
    case "device": {
      const { values, positionals } = options(command, args, ["url", "name"], ["new-key"]);
      if (values.help) return help(io, "device");
      const [action, ...extra] = positionals;
      if ((action !== undefined && action !== "pair") || extra.length > 0) {
        throw new SetupUsageError(
          `unknown argument ${JSON.stringify(action === "pair" ? extra[0] : action)}\nSee 'waymark device --help'.`,
        );
      }
      const pair = action === "pair";
      const { runDeviceCommand } = await import("../device-command.js");
      return runDeviceCommand({
        pair,
        endpoint: pair ? ((await endpointOf(values.url as string | undefined, env))?.endpoint ?? null) : null,
        token: env.WAYMARK_TOKEN || undefined,
        name: values.name as string | undefined,
        newKey: values["new-key"] === true,
        env,
        out: io.stdout,
      });
    }
    case "hook": {
      if (args.includes("--help") || args.includes("-h")) return help(io, "hook");
      const { runHookCommand } = await import("../hooks/hook-command.js");
      return runHookCommand(args, io, version);
    }
  }
}

/** A yes/no question on the terminal: yes only for an answer starting with y. */
async function askOnTerminal(question: string): Promise<boolean> {
  const { createInterface } = await import("node:readline/promises");
  const terminal = createInterface({ input: process.stdin, output: process.stdout });
  try {
    return /^\s*y/i.test(await terminal.question(question));
  } finally {
    terminal.close();
  }
}

/** The endpoint from --url, WAYMARK_URL or the user-level config (null: none); a bad one is a usage error. */
async function endpointOf(flag: string | undefined, env: NodeJS.ProcessEnv) {
  try {
    return await resolveEndpoint(flag, env);
  } catch (error) {
    if (error instanceof EndpointError) throw new SetupUsageError(error.message);
    throw error;
  }
}

/** Runs init, doctor or hook; returns the exit code and never throws. */
export async function runSetupCommand(command: SetupCommand, args: string[], io: Io, version: string): Promise<number> {
  try {
    return await run(command, args, io, version);
  } catch (error) {
    io.stderr(`waymark: ${error instanceof Error ? error.message : String(error)}\n`);
    return error instanceof SetupUsageError ? 2 : 1;
  }
}
