/**
 * @module agent-trace
 * A task's line attribution as an Agent Trace record (the open format of `cursor/agent-trace`,
 * spec 0.1.0; docs/schemas/agent-trace-record.json is its JSON Schema, transcribed from the spec's
 * README §6.1): one record per task that committed work, at the task's end commit (`vcs.revision`), so
 * its ranges are line numbers of each file at that commit, as `git blame` of it numbers them.
 *
 * Per file, one conversation: the task, linked to its page. Its contributor is the agent (`ai`,
 * with the model in models.dev's `provider/model` form) for the lines the agent's own edit tools
 * last wrote; lines something else wrote are ranges with the contributor `unknown` (Waymark saw
 * the change but not who made it: a person, a formatter, a command). Lines no hook observed are
 * in no range; the record's `metadata["dev.waymark"]` counts them per file with the reason, names
 * the files left out because their change is not in the commit, and says the record is per task.
 */
import { createHash } from "node:crypto";
import type { AgentTool, LineAuthor } from "./wire";

/** The spec's version this record follows: semver `X.Y.Z`, as its schema (README §6.1) requires. */
export const AGENT_TRACE_VERSION = "0.1.0";

export interface TraceRange {
  start_line: number;
  end_line: number;
  author: LineAuthor;
  content_hash: string;
}

/** A file's attributed ranges at the task's end (as the edge stores them). */
export interface TraceFile {
  path: string;
  ranges: readonly TraceRange[];
  omitted?: true;
  reason?: string;
}

/** What a record says of its task. */
export interface TraceTask {
  workflow_id: string;
  task_id: string;
  name: string;
  completed_at: string;
  start_revision: string | null;
  /** The commit the task ended on (40 hex digits). */
  revision: string;
  /** The commits made during the task, newest first, as the helper listed them. */
  commits: readonly string[];
  tool?: AgentTool;
  /** The model as the task's usage names it (transcript or claimed). */
  model: string | null;
  /** The task on its page (absent: the export has no page to point at). */
  url?: string;
  /** Why none of its lines were observed (no hook saw the task). */
  not_observed_reason?: string;
}

export interface TraceContributor {
  type: "human" | "ai" | "mixed" | "unknown";
  model_id?: string;
}

export interface AgentTraceRecord {
  version: string;
  id: string;
  timestamp: string;
  vcs: { type: "git"; revision: string };
  tool?: { name: string; version: string };
  files: {
    path: string;
    conversations: {
      url?: string;
      contributor: TraceContributor;
      ranges: { start_line: number; end_line: number; content_hash: string; contributor?: TraceContributor }[];
      related?: { type: string; url: string }[];
    }[];
  }[];
  metadata: { "dev.waymark": WaymarkTraceMetadata };
}

export interface WaymarkTraceMetadata {
  /** One record per task (not per commit): its ranges are at the task's end commit. */
  record_per: "task";
  workflow_id: string;
  task_id: string;
  task_name: string;
  /** The agent as its hooks named it, also when they gave no version (the spec's `tool` needs both). */
  agent?: string;
  start_revision: string | null;
  commits: string[];
  /** Per file, the added lines no hook observed, and why. */
  not_observed?: { path: string; lines: number; reason?: string }[];
  /** Files whose ranges were more than the helper sends (their counts are in the JSON export). */
  ranges_omitted?: string[];
  /** Files whose change the end commit does not hold (left uncommitted): their ranges would not match it. */
  not_in_revision?: string[];
}

/** Providers of the model names the agents report, by prefix, as models.dev names them. */
const PROVIDERS: readonly [RegExp, string][] = [
  [/^claude-/, "anthropic"],
  [/^(?:gpt-|o\d(?:-|$)|codex-|chatgpt-)/, "openai"],
  [/^gemini-/, "google"],
  [/^grok-/, "xai"],
  [/^(?:mistral|codestral|devstral)/, "mistral"],
  [/^deepseek-/, "deepseek"],
];

/** A model name as a models.dev id (`anthropic/claude-sonnet-4-5`); undefined when its provider is not known. */
export function modelId(model: string | null): string | undefined {
  if (!model) return undefined;
  const name = model.trim().toLowerCase();
  if (/^[a-z0-9-]+\/[a-z0-9._-]+$/.test(name)) return name.slice(0, 250);
  const provider = PROVIDERS.find(([prefix]) => prefix.test(name))?.[1];
  return provider && /^[a-z0-9._-]+$/.test(name) ? `${provider}/${name}`.slice(0, 250) : undefined;
}

/** The record's id: a UUID derived from the workflow, the task and the revision, so the same record always has the same id. */
export function traceRecordId(workflowId: string, taskId: string, revision: string): string {
  const hex = createHash("sha256").update(`agent-trace\0${workflowId}\0${taskId}\0${revision}`).digest("hex");
  // RFC 9562 version 8 (custom), variant 10.
  const variant = ((Number.parseInt(hex[16] as string, 16) & 0x3) | 0x8).toString(16);
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-8${hex.slice(13, 16)}-${variant}${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
}

/** RFC 3339 in UTC with a Z, as the spec's examples write it (no fraction). */
const utc = (iso: string) => `${new Date(iso).toISOString().slice(0, 19)}Z`;

/**
 * The record of one task. `files`: its attributed files; `uncommitted`: paths whose change the end
 * commit does not hold (left out of `files`).
 */
export function traceRecord(task: TraceTask, files: readonly TraceFile[], uncommitted: ReadonlySet<string>): AgentTraceRecord {
  const agent: TraceContributor = { type: "ai" };
  const model = modelId(task.model);
  if (model) agent.model_id = model;
  const metadata: WaymarkTraceMetadata = {
    record_per: "task",
    workflow_id: task.workflow_id,
    task_id: task.task_id,
    task_name: task.name,
    ...(task.tool ? { agent: task.tool.name } : {}),
    start_revision: task.start_revision,
    commits: [...task.commits],
  };
  const out: AgentTraceRecord["files"] = [];
  const notInRevision: string[] = [];
  const rangesOmitted: string[] = [];
  const notObserved: NonNullable<WaymarkTraceMetadata["not_observed"]> = [];
  for (const file of files) {
    if (uncommitted.has(file.path)) {
      notInRevision.push(file.path);
      continue;
    }
    if (file.omitted) rangesOmitted.push(file.path);
    const ranges: AgentTraceRecord["files"][number]["conversations"][number]["ranges"] = [];
    let unobserved = 0;
    for (const range of file.ranges) {
      if (range.author === "not_observed") unobserved += range.end_line - range.start_line + 1;
      else {
        const entry = { start_line: range.start_line, end_line: range.end_line, content_hash: `sha256:${range.content_hash}` };
        ranges.push(range.author === "agent" ? entry : { ...entry, contributor: { type: "unknown" } });
      }
    }
    if (unobserved > 0 || (file.reason && file.ranges.length === 0)) {
      const note: { path: string; lines: number; reason?: string } = { path: file.path, lines: unobserved };
      const reason = file.reason ?? task.not_observed_reason;
      if (reason) note.reason = reason;
      notObserved.push(note);
    }
    if (ranges.length === 0) continue;
    const conversation: AgentTraceRecord["files"][number]["conversations"][number] = { contributor: agent, ranges };
    if (task.url) {
      conversation.url = task.url;
      conversation.related = [{ type: "waymark-task", url: task.url }];
    }
    out.push({ path: file.path, conversations: [conversation] });
  }
  if (notObserved.length > 0) metadata.not_observed = notObserved;
  if (rangesOmitted.length > 0) metadata.ranges_omitted = rangesOmitted;
  if (notInRevision.length > 0) metadata.not_in_revision = notInRevision;
  const record: AgentTraceRecord = {
    version: AGENT_TRACE_VERSION,
    id: traceRecordId(task.workflow_id, task.task_id, task.revision),
    timestamp: utc(task.completed_at),
    vcs: { type: "git", revision: task.revision },
    files: out,
    metadata: { "dev.waymark": metadata },
  };
  if (task.tool?.version) record.tool = { name: task.tool.name, version: task.tool.version };
  return record;
}
