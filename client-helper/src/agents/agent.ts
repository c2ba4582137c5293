/**
 * @module agents/agent
 * The one interface every agent the helper works with implements (Claude Code, Cursor, Codex: one
 * module each, beside this one; the one list is @waymark/protocol/agents, which ./registry.ts binds
 * to them). An agent is two halves:
 * - the Node-free half, `AgentConfig` (@waymark/protocol/agents/<name>), which the plugins served by
 *   the Worker, init and the hooks share: its hooks and their file's layout, what its hooks answer and
 *   the payload fields every hook reads, its plugin files;
 * - this half, on the developer's machine: its setup (how init tells the agent is in use and the
 *   files it writes for it, as declarations ../init/config-files.ts writes; what it tells the user
 *   and what doctor checks beyond those files), what one of its tool calls did (the files its edit
 *   tools named, the shell command it ran, what the edit did to the lines), and its transcript
 *   (usage, its version, the ids it gives tool calls).
 * Below the interface, the readers of payload values every agent's module uses.
 * The hot paths load no more than they need: a hook that only answers (session start, a stop)
 * reads the protocol half alone; the helper's half loads when a tool call is recorded
 * (../hooks/tool-call.ts), at complete_task, and in init and doctor.
 */
import type { AgentConfig, HookPayload } from "@waymark/protocol/agent-config";
import { WIRE_LIMITS } from "@waymark/protocol/wire-constants";
import type { Endpoint } from "../endpoint.js";
import type { Markers } from "../init/blocks.js";
import type { CapturedEdit } from "../lines/capture.js";
import type { TokenCounts } from "../usage/prices.js";

/** Where init and doctor work: the project, the user, the endpoint and this helper's version. */
export type SetupContext = {
  /** The project directory (repository top level). */
  project: string;
  home: string;
  env: NodeJS.ProcessEnv;
  endpoint: Endpoint;
  version: string;
};

/** A sign that the developer uses the agent: a file or folder that exists, or a command on PATH. */
export type Evidence = { label: string; path: string } | { label: string; command: string };

/**
 * One file init writes for the agent, declared (../init/config-files.ts applies it, takes it out and
 * checks it): only Waymark's part of the file is ever touched.
 */
export type SetupFile =
  /** The `waymark` entry of a JSON file's `mcpServers`. */
  | { kind: "mcp-server"; path: string; server: Record<string, unknown> }
  /** The agent's hooks (AgentConfig's `hooks`) in its hooks file, in its layout (`hooksFile`). */
  | { kind: "hooks"; path: string }
  /** The instructions as a marked block in a Markdown file the user owns. */
  | { kind: "instructions"; path: string }
  /** The instructions as a file of Waymark's own (`wrap` puts their block in it), or as a block where the user wrote around it. */
  | { kind: "instructions-file"; path: string; wrap: (block: string) => string }
  /**
   * A marked block of the agent's own in a file the user owns (inside the project or not), made for
   * the file's current content; `conflict`: why it cannot be written, from the file outside the block.
   */
  | {
      kind: "block";
      path: string;
      scope: "project" | "home";
      markers: Markers;
      block: (content: string | null) => string;
      conflict?: (outside: string) => string | null;
      /** What doctor says when the block is missing, and when it differs from what init writes. */
      missing: string;
      stale: string;
      /**
       * A TOML block the agent's own CLI also writes into (../init/toml-block.ts): what it put there is
       * kept when init rewrites or removes the block, and ignored by doctor; on removal, the keys it
       * added to the tables named in `keepOnRemove` stay too.
       */
      toml?: { keepOnRemove: readonly string[] };
    };

/** One of doctor's checks. `skipped`: the check could not run (its detail says why); neither a pass nor a failure. */
export type DoctorCheck = { name: string; ok: boolean; detail: string; fix?: string; skipped?: boolean };

/** What one tool call did to files, as its payload says: the files its edit tools touched, or (`paths` empty) work on the task that edits files only as any command does. */
export type ToolCall = { tool: string; paths: string[] };

/** One shell command as a hook reported it (before redaction and bounds). */
export type ShellRun = {
  command: string;
  exit_code: number | null;
  duration_ms: number | null;
  /** The call's id and the session file, where the exit code is read later (Transcript.commandResults). */
  call_id?: string;
  transcript?: string;
};

/** One model response a transcript line records, under the key that identifies it (a response written on several lines counts once). */
export type TranscriptResponse = { key: string; response: TokenCounts & { model: string } };

/** What a command's record lacked, read later from the session file. */
export type CommandResult = { exit_code: number | null; duration_ms: number | null };

/** The agent's transcript (the file its hook payloads name as `transcript_path`), read for the task's usage. */
export type Transcript = {
  /** A reader of one file's lines, in order (it may keep what earlier lines said, such as a turn's model): a response, or null. */
  responses(): (line: string, fromMs: number, toMs: number) => TranscriptResponse | null;
  /** Other files with the same session's usage (its subagents'). */
  moreFiles?(path: string): Promise<string[]>;
  /**
   * Whether the transcript now holds the usage of the response that made tool call `callId` (the
   * agent's id, sent in the call's `_meta`), read line by line in order: the predicate keeps what it saw.
   */
  callingResponseWritten(callId: string): (line: string) => boolean;
  /** The exit codes and durations of commands its hooks could not tell, by call id (ShellRun's `call_id`). */
  commandResults?(path: string, ids: ReadonlySet<string>): Promise<Map<string, CommandResult>>;
};

/** What init and doctor need of an agent. */
export type AgentSetup = {
  /** Signs that the developer uses it (none found: init leaves it out unless named). */
  evidence(ctx: SetupContext): Evidence[];
  /** The files init writes for it. */
  files(ctx: SetupContext): SetupFile[];
  /** What init tells the user once its files are written (steps the agent asks of them), or nothing. */
  notes?(ctx: SetupContext): Promise<string>;
  /**
   * `init --trust`: gives, headless, the trust the agent otherwise asks of the user in its own UI
   * (Codex: the project, and Waymark's hooks exactly as init wrote them), through the agent itself;
   * what it did, or why it could not. Runs once the agent's files are written.
   */
  trust?(ctx: SetupContext): Promise<string>;
  /** Whether the Waymark plugin is enabled for the user too (then every hook runs twice: doctor says so). */
  pluginEnabled?(ctx: SetupContext): Promise<boolean>;
  /** Doctor's checks of what the agent itself must allow (beyond init's files). */
  doctorChecks?(ctx: SetupContext): Promise<DoctorCheck[]>;
};

export interface Agent extends AgentConfig {
  /** Its instructions file, relative to the project (init's help names it). */
  readonly instructionsFile: string;
  /** Its setup, for init and doctor. */
  readonly setup: AgentSetup;

  /** What a tool call did to files, from its post-tool-use payload; null: nothing to record. */
  toolCall(payload: HookPayload): ToolCall | null;
  /** The shell command a payload reports, or null. */
  shellRun(payload: HookPayload): ShellRun | null;
  /** What the call's edits did to each file's lines, from the payload alone (never the disk); empty: no edit to follow. */
  capturedEdits(payload: HookPayload): CapturedEdit[];
  /** The agent's version, when its tool-call payloads name it. */
  payloadVersion?(payload: HookPayload): string | undefined;

  /** Agent Trace's `tool`: its name there, and where its transcript writes its version (the first one in its start, or the last in its end). */
  readonly trace: { name: string; versionAt: "start" | "end" };
  /** Its transcript; null: none that tells usage. */
  readonly transcript: Transcript | null;
  /** Its id of a tool call, from the call's `_meta`. */
  callId?(meta: Record<string, unknown>): string | undefined;
}

/** A payload's non-empty string, else null. */
export const nonEmpty = (value: unknown): string | null => (typeof value === "string" && value !== "" ? value : null);
/** A payload's object (an array or anything else: empty). */
export const objectIn = (value: unknown): HookPayload =>
  value && typeof value === "object" && !Array.isArray(value) ? (value as HookPayload) : {};
/** A payload's whole number, else null. */
export const wholeNumber = (value: unknown): number | null => (typeof value === "number" && Number.isInteger(value) ? value : null);

/** A duration a payload reports, in whole milliseconds, within the wire's bound; else null (not observed). */
export function durationMs(value: unknown): number | null {
  const ms = typeof value === "number" && Number.isFinite(value) && value >= 0 ? Math.round(value) : null;
  return ms !== null && ms <= WIRE_LIMITS.COMMAND_DURATION_MS ? ms : null;
}

/** An exit code a tool's response names explicitly, under any of the usual names. */
export function explicitExitCode(response: HookPayload): number | null {
  return wholeNumber(response.exit_code) ?? wholeNumber(response.exitCode) ?? wholeNumber(response.returnCode);
}

/** A token count a transcript reports (anything else counts nothing). */
export function tokenCount(value: unknown): number {
  return typeof value === "number" && Number.isFinite(value) && value > 0 ? Math.floor(value) : 0;
}
