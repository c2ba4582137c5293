/**
 * @module views/task
 * A task as the edge shows it (get_workflow {task_id}, the pages, the exports, its events): what
 * the agent said (outcome, metadata, usage), what was observed (files changed and their lines,
 * commits, the shell commands the hooks saw), where each figure came from (see
 * docs/provenance.md), and how it sits against its declared areas and concurrent tasks.
 */
import { z } from "zod";
import { COMMAND_KINDS } from "../command-kind";
import { agentToolSchema, commitInfoSchema, lineCountSchema, truncationSchema, WIRE_LIMITS } from "../wire";
import { countSchema, deviceRefSchema, isoTimeSchema, sha256Schema, stringsSchema, taskIdSchema, workflowIdSchema } from "./common";

export const TASK_STATUSES = ["in_progress", "success", "partial_success", "failed"] as const;
export const taskStatusSchema = z.enum(TASK_STATUSES).meta({ id: "taskStatus" });

export const SNAPSHOT_TYPES = ["git", "checksum", "unavailable", "none"] as const;

export const taskOutcomeSchema = z.strictObject({
  summary: z.string(),
  achievements: stringsSchema.optional(),
  limitations: stringsSchema.optional(),
  manual_review_needed: z.boolean().optional(),
  manual_review_reason: z.string().optional(),
  next_steps: stringsSchema.optional(),
});

export const taskMetadataSchema = z.strictObject({
  packages_added: stringsSchema.optional(),
  packages_removed: stringsSchema.optional(),
  commands_executed: stringsSchema.optional(),
  tests_status: z.enum(["passed", "failed", "not_run"]).optional(),
});
export type TaskMetadata = z.infer<typeof taskMetadataSchema>;

/** Where a task's files_changed came from, as the edge decided it (@waymark/protocol/provenance-wording words it). */
export const filesSourceSchema = z
  .discriminatedUnion("kind", [
    z.strictObject({ kind: z.literal("signed"), version: z.string(), device: deviceRefSchema }),
    /** `version`: the helper version the data said it came from, when it said so. */
    z.strictObject({ kind: z.literal("claimed"), version: z.string().optional(), reason: z.string() }),
    z.strictObject({ kind: z.literal("not_observed"), reason: z.string() }),
    // Recorded before devices signed: self-declared, so read as claims.
    z.strictObject({ kind: z.literal("helper"), version: z.string() }),
    z.strictObject({ kind: z.literal("client") }),
  ])
  .describe(
    "Where the lists came from, as the edge decided it: computed and signed (an approved device's signature over exactly these changes and this task verified), claimed by the client (with the version it named, if any, and why it is not signed), or not observed. 'helper' and 'client' are records written before devices signed: both are claims.",
  );
export type FilesSource = z.infer<typeof filesSourceSchema>;

export const lineTotalsSchema = z.strictObject({
  added: countSchema,
  removed: countSchema,
  /** Changed files git treats as binary (no line counts). */
  binary: countSchema,
});
export type LineTotals = z.infer<typeof lineTotalsSchema>;

/** Of a task's added lines: written by the agent's own edit tools, by others, not observed (docs/evidence.md). */
export const lineAuthorsSchema = z.strictObject({ agent: countSchema, others: countSchema, not_observed: countSchema });
export type LineAuthors = z.infer<typeof lineAuthorsSchema>;
/** A task's totals, the agent its hooks named, and why its lines were not observed (when no hook saw the task). */
export const taskLineAuthorsSchema = lineAuthorsSchema
  .extend({ tool: agentToolSchema.optional(), not_observed_reason: z.string().optional() })
  .describe("Who wrote the task's added lines, summed over the files the helper attributed (docs/evidence.md).");
export type TaskLineAuthors = z.infer<typeof taskLineAuthorsSchema>;

export const renameSchema = z.strictObject({ from: z.string(), to: z.string() });

/**
 * What a task changed (docs/attribution.md): the attributed lists (@waymark/protocol/files-changed),
 * the review fields the helper measured (@waymark/protocol/review-fields), and their provenance.
 */
export const filesChangedSchema = z
  .strictObject({
    added: stringsSchema,
    modified: stringsSchema,
    deleted: stringsSchema,
    /** A D and an A with the same content; both paths stay in deleted/added too. */
    renamed: z.array(renameSchema),
    /** Paths whose change is not carried by a commit made during the task. */
    uncommitted: stringsSchema,
    truncated: truncationSchema.describe("The helper's lists were too long to send whole: what they leave out, per directory.").optional(),
    lines: z.array(lineCountSchema.meta({ id: "lineCount" })).optional(),
    line_totals: lineTotalsSchema.optional(),
    line_authors: taskLineAuthorsSchema.optional(),
    commits: z.array(commitInfoSchema).optional(),
    commits_omitted: countSchema.optional(),
    /** The branch checked out at the end (null: detached HEAD). */
    branch: z.string().nullable().optional(),
    source: filesSourceSchema.optional(),
    /**
     * Changed files the agent's edit tools did not touch (a command, a generator, someone else).
     * Present only when the hooks observed the task's work; as trustworthy as `source`.
     */
    not_by_agent_tools: stringsSchema.optional(),
    more: countSchema
      .describe(
        "In an event's task only: changed files the record holds beyond those listed (the first files in path order up to the edge's bound; the task's file pages and the JSON export list them all).",
      )
      .optional(),
  })
  .meta({
    id: "filesChanged",
    description:
      "What the task changed (docs/attribution.md). In the export's tasks every list is complete; in an event's task a large task names its first files in path order and counts the rest in `more`.",
  });
export type FilesChanged = z.infer<typeof filesChangedSchema>;

export const overlapSchema = z
  .strictObject({
    path: z.string(),
    task_id: taskIdSchema,
    same_change: z.boolean(),
    /** The other task's workflow, when it is another one (two agents on one working tree, as the helper reported them). */
    workflow_id: workflowIdSchema.optional(),
  })
  .meta({ id: "overlap" });
export type Overlap = z.infer<typeof overlapSchema>;

export const verificationSchema = z
  .strictObject({
    scope_match: z.boolean(),
    unexpected_files: stringsSchema,
    warnings: stringsSchema,
    overlapping: z.array(overlapSchema).optional(),
    more: z
      .strictObject({ unexpected_files: countSchema.optional(), overlapping: countSchema.optional() })
      .describe("In an event's task only: entries the record holds beyond those listed.")
      .optional(),
  })
  .meta({ id: "verification" });
export type Verification = z.infer<typeof verificationSchema>;

/** Usage the agent reported at complete_task; each task reports its own, not its subtasks'. */
export const taskMetricsSchema = z.strictObject({
  input_tokens: countSchema.nullable(),
  output_tokens: countSchema.nullable(),
  model: z.string().nullable(),
  cost_usd: z.number().min(0).nullable(),
  source: z
    .enum(["transcript", "agent"])
    .nullable()
    .describe(
      "'transcript' with a device: summed from the agent's transcript and signed by that approved device; 'agent', or 'transcript' without a device (recorded before devices signed): claimed by the client.",
    )
    .optional(),
  price_table_date: z.string().nullable().optional(),
  device: deviceRefSchema.optional(),
});
export type TaskMetrics = z.infer<typeof taskMetricsSchema>;

const commitIdSchema = z.string().regex(/^[0-9a-f]{40,64}$/, "must be a 40- or 64-digit lowercase hex commit id");

/** The repository a task ran in, as its start snapshot and its completion saw it. */
export const taskRepositorySchema = z.strictObject({
  fingerprint: sha256Schema.nullable(),
  remote: z.string().nullable(),
  branch: z.string().nullable(),
  start_commit: commitIdSchema.nullable(),
  end_commit: commitIdSchema.nullable(),
  dirty_at_start: countSchema
    .describe(
      "Files with uncommitted changes (untracked included) when the task started: their start state is not the start commit's. Absent: recorded before it was kept.",
    )
    .optional(),
  dirty_paths_at_start: z
    .array(z.string())
    .describe(
      "Their paths, when the start snapshot named them all within the record's bound (absent: not named, and `waymark verify --repo` cannot decide a difference git shows on such a task).",
    )
    .optional(),
});
export type TaskRepository = z.infer<typeof taskRepositorySchema>;

/** A shell command the agent ran during a task, as the helper's hooks observed it (docs/evidence.md). */
export const commandRunSchema = z
  .strictObject({
    command: z
      .string()
      .min(1)
      .describe(
        `The command line, secrets redacted on the developer's machine, at most ${WIRE_LIMITS.COMMAND_BYTES} bytes of UTF-8; never its output.`,
      ),
    truncated: z.literal(true).describe("The command line was cut at its bound.").optional(),
    at: isoTimeSchema.describe("When it ended (the helper's clock)."),
    exit_code: z.number().int().nullable().describe("null: the agent's hook did not report it (not observed)."),
    duration_ms: countSchema.nullable(),
    kinds: z
      .array(z.enum(COMMAND_KINDS))
      .refine((kinds) => new Set(kinds).size === kinds.length, "must not repeat a kind")
      .meta({ uniqueItems: true }),
  })
  .meta({ id: "observedCommand" });
export type CommandRunView = z.infer<typeof commandRunSchema>;

/** The commands observed during a task (a task without them: not observed), oldest first. */
export const taskCommandsSchema = z
  .strictObject({
    runs: z.array(commandRunSchema).max(WIRE_LIMITS.COMMANDS),
    omitted: countSchema.describe("Commands observed beyond the bound, not recorded."),
    last_edit_at: isoTimeSchema
      .nullable()
      .describe("The agent's last edit through its own edit tools, per the hooks; null: none recorded."),
  })
  .meta({ id: "observedCommands" });
export type TaskCommandsView = z.infer<typeof taskCommandsSchema>;

/**
 * What this task's helper found, at its completion, of an earlier task's lines in the same
 * repository (docs/insights.md, durability): at `commit`, `present` of the `recorded` lines the
 * earlier task's agent wrote are still where they were written. As trustworthy as the task's files.
 */
export const lineDurabilitySchema = z
  .strictObject({
    task_id: taskIdSchema,
    commit: commitIdSchema,
    at: isoTimeSchema.describe("When the helper looked (its clock)."),
    recorded: countSchema,
    present: countSchema,
  })
  .meta({ id: "lineDurability" });
export type LineDurability = z.infer<typeof lineDurabilitySchema>;

export const taskViewSchema = z
  .strictObject({
    id: taskIdSchema,
    parent_task_id: taskIdSchema.nullable(),
    name: z.string(),
    goal: z.string(),
    areas: stringsSchema,
    status: taskStatusSchema,
    snapshot_type: z.enum(SNAPSHOT_TYPES),
    started_at: isoTimeSchema,
    completed_at: isoTimeSchema.nullable(),
    duration_seconds: countSchema.nullable(),
    outcome: taskOutcomeSchema.nullable(),
    metadata: taskMetadataSchema.nullable(),
    files_changed: filesChangedSchema.nullable(),
    verification: verificationSchema.nullable(),
    metrics: taskMetricsSchema.nullable(),
    /** Repository, branch, start and end commits, as the helper reported them (absent or null: not reported). */
    repository: taskRepositorySchema.nullable().optional(),
    commands: taskCommandsSchema
      .nullable()
      .describe(
        "The shell commands the helper's hooks observed the agent run during the task, oldest first (docs/evidence.md). Absent or null: not observed.",
      )
      .optional(),
    durability: z
      .array(lineDurabilitySchema)
      .describe(
        "Earlier tasks' lines this task's helper found still present, or gone, when it completed (docs/insights.md). Absent: none reported.",
      )
      .optional(),
  })
  .meta({ id: "task" });
export type TaskView = z.infer<typeof taskViewSchema>;
