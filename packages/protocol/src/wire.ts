/**
 * @module wire
 * The data the helper sends to the edge, declared once: the zod schemas the edge validates
 * with and the types both sides compile against (docs/attribution.md explains each field),
 * and the metrics shape. The size ceilings and the helper-only input names live in
 * ./wire-constants (re-exported here), which code that must start fast imports directly.
 */
import { z } from "zod";
import { COMMAND_KINDS } from "./command-kind";
import { DEVICE_KEY_PATTERN, NONCE_PATTERN, SIGNATURE_PATTERN } from "./device-signature";
import { repoPathProblem } from "./paths";
import { REPOSITORY_LIMITS } from "./repository-fingerprint";
import { REVIEW_LIMITS, WIRE_LIMITS } from "./wire-constants";

export { HELPER_INPUT_NAMES, WIRE_LIMITS } from "./wire-constants";

// C0 controls other than tab, newline and carriage return have no place in a record meant to be read.
const CONTROL_CHARACTERS = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f]/;
/** Text people will read: well-formed Unicode without control characters. */
export function isReadableText(text: string): boolean {
  return text.isWellFormed() && !CONTROL_CHARACTERS.test(text);
}
export const READABLE_TEXT_RULE = "must be valid Unicode text without control characters";

export const repoPathSchema = z.string().superRefine((path, ctx) => {
  const problem = repoPathProblem(path);
  if (problem) ctx.addIssue({ code: "custom", message: problem });
});
const objectId = z.string().regex(/^[0-9a-f]{40}$|^[0-9a-f]{64}$/, "must be a 40- or 64-digit lowercase hex object id");
const commitId = objectId.nullable();

export const fileStateSchema = z.strictObject({
  mode: z.string().regex(/^[0-7]{6}$/, "must be a 6-digit octal git mode"),
  blob: objectId,
});
const presence = fileStateSchema.nullable();
export const dirtyEntrySchema = z.strictObject({ path: repoPathSchema, head: presence, worktree: presence });
export const transitionSchema = z.strictObject({ path: repoPathSchema, before: presence, after: presence });
/** A transition the helper already resolved; `committed` as in docs/attribution.md (absent: not known). */
export const netTransitionSchema = transitionSchema.extend({ committed: z.boolean().optional() });

const warningsSchema = z
  .array(z.string().max(WIRE_LIMITS.WARNING_CHARS).refine(isReadableText, READABLE_TEXT_RULE))
  .max(WIRE_LIMITS.WARNINGS);

/**
 * What a list too large to send became: counts of the changes left out, per directory (""
 * is the root). The changes that are listed are exact; `omitted` says how many are not.
 */
export const truncationSchema = z.strictObject({
  omitted: z.number().int().min(1),
  directories: z
    .array(
      z.strictObject({
        path: z.union([z.literal(""), repoPathSchema]),
        added: z.number().int().min(0),
        modified: z.number().int().min(0),
        deleted: z.number().int().min(0),
      }),
    )
    .max(WIRE_LIMITS.TRUNCATED_DIRECTORIES),
  /** Omitted changes in directories beyond the ones named. */
  other: z.number().int().min(0),
});

/**
 * Another task whose window overlapped this one on the same working tree, as the helper
 * recorded it on this machine (any workflow, any agent using the same endpoint). Times are
 * epoch milliseconds; `shared_paths` are files both tasks changed, known once the other task
 * completed (`shared_count` is exact when the list is cut).
 */
export const concurrentTaskSchema = z.strictObject({
  task_id: z.string().min(1).max(64).refine(isReadableText, READABLE_TEXT_RULE),
  started_at: z.number().int().min(0),
  completed_at: z.number().int().min(0).nullable(),
  shared_paths: z.array(repoPathSchema).max(WIRE_LIMITS.SHARED_PATHS).optional(),
  shared_count: z.number().int().min(0).optional(),
});
const concurrentSchema = z.array(concurrentTaskSchema).max(WIRE_LIMITS.CONCURRENT_TASKS);

/** One entry per path: a path listed twice would make the snapshot ambiguous. */
function uniquePaths<T extends { path: string }>(entries: T[], ctx: z.RefinementCtx): void {
  const seen = new Set<string>();
  entries.forEach((entry, index) => {
    if (seen.has(entry.path)) ctx.addIssue({ code: "custom", path: [index, "path"], message: `"${entry.path}" is listed more than once` });
    seen.add(entry.path);
  });
}

// ── Provenance and repository identity (docs/attribution.md "Provenance") ──

/**
 * A device's signature over the data it travels in (./device-signature says what it covers).
 * Its shape is checked here; whether it verifies, and against which approved device, the edge
 * decides and records (a wrong signature is recorded as the client's claim, never refused).
 */
export const deviceSignatureSchema = z.strictObject({
  key: z.string().regex(DEVICE_KEY_PATTERN, "must be a 32-byte Ed25519 public key, base64url without padding"),
  signed_at: z.number().int().min(0),
  nonce: z.string().regex(NONCE_PATTERN, "must be 16 random bytes, base64url without padding"),
  start_nonce: z.string().regex(NONCE_PATTERN, "must be 16 random bytes, base64url without padding").optional(),
  signature: z.string().regex(SIGNATURE_PATTERN, "must be a 64-byte Ed25519 signature, base64url without padding"),
});

/**
 * The helper identifies itself in everything it computes, and signs it with its device's key
 * when it has one (`device`). The name and version alone are self-declared, like any client's
 * identity: the edge records data as computed by the helper only when an approved device's
 * signature verifies; everything else is the client's claim.
 */
export const helperSourceSchema = z.strictObject({
  kind: z.literal("helper"),
  version: z.string().regex(/^[0-9A-Za-z.+-]{1,64}$/, "must be a version like 0.1.0"),
  device: deviceSignatureSchema.optional(),
});
export type HelperSource = z.infer<typeof helperSourceSchema>;

/**
 * The paths the agent's own edit tools touched during the task, as the helper's hooks recorded
 * them (absent when no hook ran: then nothing is known either way). `truncated`: more were recorded.
 */
export const agentEditsSchema = z.strictObject({
  paths: z.array(repoPathSchema).max(WIRE_LIMITS.CHANGE_ENTRIES),
  truncated: z.boolean().optional(),
});
export type AgentEdits = z.infer<typeof agentEditsSchema>;

const utf8Bytes = (text: string) => new TextEncoder().encode(text).length;

/**
 * One shell command the agent ran through its shell tool, as the helper's hooks observed it
 * (docs/evidence.md): its command line with secrets redacted (never its output), when it ended
 * (epoch ms, the helper's clock), its exit code and duration (null: the agent's hook did not
 * report them), and the kinds of check it runs (@waymark/protocol/command-kind).
 */
export const observedCommandSchema = z.strictObject({
  command: z
    .string()
    .min(1)
    .refine((text) => utf8Bytes(text) <= WIRE_LIMITS.COMMAND_BYTES, `must be at most ${WIRE_LIMITS.COMMAND_BYTES} bytes of UTF-8`)
    .refine(isReadableText, READABLE_TEXT_RULE),
  /** The command line was cut at COMMAND_BYTES. */
  truncated: z.literal(true).optional(),
  at: z.number().int().min(0),
  exit_code: z.number().int().min(-2147483648).max(2147483647).nullable(),
  duration_ms: z.number().int().min(0).max(WIRE_LIMITS.COMMAND_DURATION_MS).nullable(),
  kinds: z
    .array(z.enum(COMMAND_KINDS))
    .max(COMMAND_KINDS.length)
    .refine((kinds) => new Set(kinds).size === kinds.length, "must not repeat a kind"),
});
/**
 * The commands the hooks observed during a task (absent: no hook could observe them: then nothing
 * is known either way), oldest first; `omitted`: runs observed beyond the bound and not sent;
 * `last_edit_at`: the agent's last edit through its edit tools, per the hooks (null: none recorded).
 */
export const observedCommandsSchema = z.strictObject({
  runs: z.array(observedCommandSchema).max(WIRE_LIMITS.COMMANDS),
  omitted: z.number().int().min(1).optional(),
  last_edit_at: z.number().int().min(0).nullable(),
});
export type ObservedCommand = z.infer<typeof observedCommandSchema>;
export type ObservedCommands = z.infer<typeof observedCommandsSchema>;

/**
 * What the helper found with git of an earlier task's lines (docs/insights.md, durability): at
 * `commit` (HEAD when it looked, epoch ms `at`), of the `recorded` lines the agent's edit tools
 * wrote in the task's committed files, `present` are still where `git blame` and the task's
 * record put them (`waymark blame`'s reading). Sent at a later completion in the same repository.
 */
export const durabilityObservationSchema = z
  .strictObject({
    task_id: z.string().regex(/^tk_[a-z2-7]{20}_[a-z2-7]{8}$/, "must be a task id (tk_…)"),
    commit: z.string().regex(/^[0-9a-f]{40}$|^[0-9a-f]{64}$/, "must be a 40- or 64-digit lowercase hex commit id"),
    at: z.number().int().min(0),
    recorded: z
      .number()
      .int()
      .min(1)
      .max(WIRE_LIMITS.LINE_RANGES * 1_000_000),
    present: z.number().int().min(0),
  })
  .refine((seen) => seen.present <= seen.recorded, { message: "present: must be at most recorded", path: ["present"] });
export type DurabilityObservation = z.infer<typeof durabilityObservationSchema>;

/** What the helper adds to every changes report it sends. */
const provenanceFields = {
  source: helperSourceSchema.optional(),
  agent_edits: agentEditsSchema.optional(),
  commands: observedCommandsSchema.optional(),
  durability: z.array(durabilityObservationSchema).max(WIRE_LIMITS.DURABILITY_OBSERVATIONS).optional(),
};

/**
 * The repository the helper runs in (start_workflow, and the start snapshot of start_task):
 * its fingerprint (./repository-fingerprint), the normalised remote for display (null without a remote,
 * never credentials) and the branch (null when detached).
 */
export const repositorySchema = z.strictObject({
  fingerprint: z.string().regex(/^[0-9a-f]{64}$/, "must be a 64-digit lowercase hex sha-256"),
  remote: z.string().min(1).max(REPOSITORY_LIMITS.REMOTE_CHARS).refine(isReadableText, READABLE_TEXT_RULE).nullable(),
  branch: z.string().min(1).max(REPOSITORY_LIMITS.BRANCH_CHARS).refine(isReadableText, READABLE_TEXT_RULE).nullable(),
});
export type Repository = z.infer<typeof repositorySchema>;
// ---- Review data: line counts and commits (helper-computed, optional on changes) ----

/**
 * Lines added and removed in one changed file between the task's start and end content, as
 * `git diff --numstat` counts them (docs/attribution.md, "Line counts"). `binary: true` (and no
 * counts) for a file git treats as binary; absent from the list: not known (content gone).
 */
const lineCount = z.number().int().min(0);
/**
 * Of a file's added lines, how many the agent's own edit tools last wrote (`agent`), something else
 * did (`others`: the user, a formatter, a generator, another agent, a command), and how many no hook
 * observed (`not_observed`); the three sum to `added` (docs/evidence.md, "Line attribution"). Absent:
 * the helper did not attribute the file's lines.
 */
const lineAuthorsShape = { agent: lineCount.optional(), others: lineCount.optional(), not_observed: lineCount.optional() };
export const lineCountSchema = z.union([
  z
    .strictObject({ path: repoPathSchema, added: lineCount, removed: lineCount, ...lineAuthorsShape })
    .refine(
      (line) =>
        line.agent === undefined && line.others === undefined && line.not_observed === undefined
          ? true
          : (line.agent ?? 0) + (line.others ?? 0) + (line.not_observed ?? 0) === line.added,
      { message: "agent + others + not_observed must equal added", path: ["agent"] },
    ),
  z.strictObject({ path: repoPathSchema, binary: z.literal(true) }),
]);

/** Who last wrote a range of a file's end content: the agent's own edit tools, something else, or not observed. */
export const LINE_AUTHORS = ["agent", "others", "not_observed"] as const;
export type LineAuthor = (typeof LINE_AUTHORS)[number];
/**
 * Lines `start`…`end` (1-based, inclusive) of a file's content at the task's end, who wrote them,
 * and a hash of their bytes (the first 16 hex digits of their SHA-256): never the lines themselves.
 */
export const lineRangeSchema = z.tuple([
  z.number().int().min(1),
  z.number().int().min(1),
  z.enum(LINE_AUTHORS),
  z.string().regex(/^[0-9a-f]{16}$/, "must be 16 lowercase hex digits"),
]);
export type LineRange = z.infer<typeof lineRangeSchema>;
const boundedText = (max: number) => z.string().min(1).max(max).refine(isReadableText, READABLE_TEXT_RULE);
/**
 * The added lines of one file as ranges of its end content. `reason`: why some or all of them were
 * not observed line by line; `omitted`: more ranges than the helper sends (the counts in `lines` stay exact).
 */
export const fileLineRangesSchema = z.strictObject({
  path: repoPathSchema,
  ranges: z
    .array(lineRangeSchema)
    .max(WIRE_LIMITS.LINE_RANGES_PER_FILE)
    .superRefine((ranges, ctx) => {
      let last = 0;
      ranges.forEach(([start, end], index) => {
        if (start > end || start <= last)
          ctx.addIssue({ code: "custom", path: [index], message: "ranges must be in order, start ≤ end, without overlap" });
        last = end;
      });
    }),
  omitted: z.literal(true).optional(),
  reason: boundedText(WIRE_LIMITS.LINE_REASON_CHARS).optional(),
});
export type FileLineRanges = z.infer<typeof fileLineRangesSchema>;
/** The agent whose hooks observed the task, as they report it (Agent Trace's `tool`). */
export const agentToolSchema = z.strictObject({
  name: boundedText(WIRE_LIMITS.TOOL_CHARS),
  version: boundedText(WIRE_LIMITS.TOOL_CHARS).optional(),
});
export type AgentTool = z.infer<typeof agentToolSchema>;
/** The line ranges of a task's changed text files (helper-computed from its hooks' records and git's diff). */
export const lineAttributionSchema = z.strictObject({
  tool: agentToolSchema.optional(),
  /** Set when no hook of the agent observed the task (every added line is "not observed"): why. */
  not_observed: boundedText(WIRE_LIMITS.LINE_REASON_CHARS).optional(),
  /** Files whose ranges were left out to stay within LINE_ATTRIBUTION_BYTES (their line counts are still sent). */
  files_omitted: z.number().int().min(1).max(WIRE_LIMITS.CHANGE_ENTRIES).optional(),
  files: z
    .array(fileLineRangesSchema)
    .max(WIRE_LIMITS.CHANGE_ENTRIES)
    .superRefine(uniquePaths)
    .superRefine((files, ctx) => {
      const total = files.reduce((sum, file) => sum + file.ranges.length, 0);
      if (total > WIRE_LIMITS.LINE_RANGES) ctx.addIssue({ code: "custom", message: `at most ${WIRE_LIMITS.LINE_RANGES} ranges in all` });
    }),
});
export type LineAttribution = z.infer<typeof lineAttributionSchema>;
/** A commit made during the task (reachable from HEAD at the end, not from HEAD at the start); never known to be pushed. */
export const commitInfoSchema = z.strictObject({
  sha: z.string().regex(REVIEW_LIMITS.SHORT_SHA, "must be a 7- to 64-digit lowercase hex commit id"),
  subject: z.string().max(REVIEW_LIMITS.SUBJECT_CHARS).refine(isReadableText, READABLE_TEXT_RULE),
  /** The `Waymark-Task:` trailer of the commit message, when it has one. */
  task: z.string().min(1).max(64).refine(isReadableText, READABLE_TEXT_RULE).optional(),
});
export const reviewDataSchema = z.strictObject({
  lines: z.array(lineCountSchema).max(WIRE_LIMITS.CHANGE_ENTRIES).superRefine(uniquePaths),
  commits: z.array(commitInfoSchema).max(REVIEW_LIMITS.COMMITS),
  commits_omitted: z.number().int().min(1).optional(),
  /** The branch checked out at the end (null: detached HEAD). */
  branch: z.string().max(WIRE_LIMITS.BRANCH_CHARS).nullable(),
  /** Which lines of the changed files the agent's edit tools wrote, as ranges (docs/evidence.md). */
  line_attribution: lineAttributionSchema.optional(),
});
export type LineCount = z.infer<typeof lineCountSchema>;
export type CommitInfo = z.infer<typeof commitInfoSchema>;
export type ReviewData = z.infer<typeof reviewDataSchema>;

export const gitSnapshotSchema = z.strictObject({
  type: z.literal("git"),
  head: commitId,
  branch: z.string().max(WIRE_LIMITS.BRANCH_CHARS).nullable().optional(),
  dirty: z.array(dirtyEntrySchema).max(WIRE_LIMITS.CHANGE_ENTRIES).superRefine(uniquePaths),
  /**
   * How many dirty entries were too many to send (then `dirty` is empty): the helper keeps them
   * on the machine and sends resolved `net` changes at complete_task.
   */
  dirty_omitted: z.number().int().min(1).optional(),
  warnings: warningsSchema.optional(),
  concurrent: concurrentSchema.optional(),
  repository: repositorySchema.optional(),
  source: helperSourceSchema.optional(),
});
export const checksumSnapshotSchema = z.strictObject({
  type: z.literal("checksum"),
  files: z.number().int().min(0),
  digest: z.string().max(128),
  warnings: warningsSchema.optional(),
  concurrent: concurrentSchema.optional(),
  source: helperSourceSchema.optional(),
});
/** The helper ran and could not observe the project; `reason` says what happened and how to fix it. */
export const unavailableSchema = z.strictObject({
  type: z.literal("unavailable"),
  reason: z.string().min(1).max(WIRE_LIMITS.WARNING_CHARS).refine(isReadableText, READABLE_TEXT_RULE),
  source: helperSourceSchema.optional(),
});
export const snapshotSchema = z.discriminatedUnion("type", [gitSnapshotSchema, checksumSnapshotSchema, unavailableSchema]);

export const gitChangesSchema = z.strictObject({
  type: z.literal("git"),
  start_head: commitId,
  head: commitId,
  committed: z.array(transitionSchema).max(WIRE_LIMITS.CHANGE_ENTRIES),
  dirty: z.array(dirtyEntrySchema).max(WIRE_LIMITS.CHANGE_ENTRIES),
  warnings: warningsSchema.optional(),
  concurrent: concurrentSchema.optional(),
  ...provenanceFields,
  review: reviewDataSchema.optional(),
});
export const checksumChangesSchema = z.strictObject({
  type: z.literal("checksum"),
  transitions: z.array(transitionSchema).max(WIRE_LIMITS.CHANGE_ENTRIES),
  warnings: warningsSchema.optional(),
  concurrent: concurrentSchema.optional(),
  ...provenanceFields,
  review: reviewDataSchema.optional(),
});
/**
 * Changes the helper resolved itself with the shared attribution rule, for any start snapshot:
 * sent when the observations were too large to send whole. `truncated` summarises what is not listed.
 */
export const netChangesSchema = z.strictObject({
  type: z.literal("net"),
  transitions: z.array(netTransitionSchema).max(WIRE_LIMITS.CHANGE_ENTRIES).superRefine(uniquePaths),
  truncated: truncationSchema.optional(),
  warnings: warningsSchema.optional(),
  concurrent: concurrentSchema.optional(),
  ...provenanceFields,
  review: reviewDataSchema.optional(),
});
/** The helper could not observe the files; the commands its hooks saw are still evidence. */
const unavailableChangesSchema = unavailableSchema.extend({ commands: observedCommandsSchema.optional() });
export const changesSchema = z.discriminatedUnion("type", [
  gitChangesSchema,
  checksumChangesSchema,
  netChangesSchema,
  unavailableChangesSchema,
]);

export type FileState = z.infer<typeof fileStateSchema>;
export type DirtyEntry = z.infer<typeof dirtyEntrySchema>;
export type Transition = z.infer<typeof transitionSchema>;
export type NetTransition = z.infer<typeof netTransitionSchema>;
export type Truncation = z.infer<typeof truncationSchema>;
export type ConcurrentTask = z.infer<typeof concurrentTaskSchema>;
export type GitSnapshot = z.infer<typeof gitSnapshotSchema>;
export type ChecksumSnapshot = z.infer<typeof checksumSnapshotSchema>;
export type Unavailable = z.infer<typeof unavailableSchema>;
export type Snapshot = z.infer<typeof snapshotSchema>;
export type GitChanges = z.infer<typeof gitChangesSchema>;
export type Changes = z.infer<typeof changesSchema>;

/** Usage an agent reports at complete_task. */
const agentMetricsShape = {
  input_tokens: z.number().int().min(0).max(WIRE_LIMITS.METRIC_TOKENS).optional(),
  output_tokens: z.number().int().min(0).max(WIRE_LIMITS.METRIC_TOKENS).optional(),
  model: z.string().min(1).max(WIRE_LIMITS.MODEL_CHARS).refine(isReadableText, READABLE_TEXT_RULE).optional(),
  cost_usd: z.number().min(0).max(WIRE_LIMITS.METRIC_COST_USD).optional(),
};
/**
 * Where the figures come from: "transcript" when the helper summed them from the agent's
 * transcript (with the date of the price table its cost used), "agent" when the agent claimed
 * them. Set by the helper; the edge records "transcript" only with helper-sourced changes.
 */
const metricsProvenanceShape = {
  source: z.enum(["transcript", "agent"]).optional(),
  price_table_date: z
    .string()
    .regex(/^\d{4}-\d{2}-\d{2}$/, "must be a date YYYY-MM-DD")
    .optional(),
};
export const metricsSchema = z.strictObject({ ...agentMetricsShape, ...metricsProvenanceShape });
export type Metrics = z.infer<typeof metricsSchema>;
/** How tools/list describes metrics: by the agent's key names only, the full schema would cost every agent context. */
export const METRICS_DESCRIPTION = `Your usage: {${Object.keys(agentMetricsShape).join(", ")}}`;
