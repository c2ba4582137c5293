/**
 * @module wire-constants
 * The wire format's plain values: the size ceilings and the helper-only input names. Kept apart
 * from the zod schemas of ./wire so that the helper's short-lived commands (a snapshot, a hook)
 * start without loading zod, which costs about as much as starting Node itself.
 */

export const WIRE_LIMITS = {
  /** Entries per list the edge accepts. */
  CHANGE_ENTRIES: 25_000,
  /**
   * The helper's ceiling per list (documented): beyond it, or beyond HELPER_LIST_BYTES, a list
   * is summarised per directory with an explicit `truncated` marker instead of being sent.
   */
  HELPER_LIST_ENTRIES: 20_000,
  /** Serialized bytes of all the helper's lists in one request, well inside the edge's 8 MiB body limit. */
  HELPER_LIST_BYTES: 4 * 1024 * 1024,
  /** Directories named in a `truncated` summary; the rest are counted in `other`. */
  TRUNCATED_DIRECTORIES: 200,
  /** Longer branch names are cut by the helper: a name is context, never a reason to refuse a task. */
  BRANCH_CHARS: 1000,
  WARNINGS: 10,
  WARNING_CHARS: 1000,
  /** Other tasks open on the same working tree that one report names. */
  CONCURRENT_TASKS: 20,
  /** Paths named per overlapping task (the count is exact beyond it). */
  SHARED_PATHS: 50,
  /**
   * Shell commands the hooks observed, per task: at most this many are sent (the last run of each
   * kind and the latest checks first, then the latest others; `omitted` counts the rest), each
   * command line cut at COMMAND_BYTES bytes of UTF-8 (`truncated`), durations up to a week.
   */
  COMMANDS: 100,
  COMMAND_BYTES: 512,
  COMMAND_DURATION_MS: 7 * 24 * 3600 * 1000,
  METRIC_TOKENS: 10_000_000_000,
  METRIC_COST_USD: 1_000_000,
  MODEL_CHARS: 200,
  /** Line ranges one task's line attribution sends in all, and per file; beyond, a file's ranges are left out (its counts stay). */
  LINE_RANGES: 20_000,
  LINE_RANGES_PER_FILE: 1_000,
  /**
   * Bytes of serialized per-file ranges one task sends: each entry repeats its path, and a task at
   * the helper's list ceilings already carries its paths twice (the changes and the line counts),
   * so the request stays inside the edge's body limit; beyond it, files' ranges are left out and
   * counted (`files_omitted`), their line counts stay.
   */
  LINE_ATTRIBUTION_BYTES: 256 * 1024,
  /** Why a file's added lines were not observed line by line. */
  LINE_REASON_CHARS: 300,
  /** The agent's name and version as its hooks or transcript report them. */
  TOOL_CHARS: 64,
  /**
   * Earlier tasks whose lines one completion reports as still present or gone (docs/insights.md,
   * durability): the helper observes at most this many per repository between two completions.
   */
  DURABILITY_OBSERVATIONS: 50,
} as const;

/** The tool inputs the helper fills in: agents never see them in tools/list and cannot supply them. */
export const HELPER_INPUTS = { start_task: "snapshot", complete_task: "changes", start_workflow: "repository" } as const;
export const HELPER_INPUT_NAMES: ReadonlySet<string> = new Set(Object.values(HELPER_INPUTS));

/**
 * A start_task or complete_task that carries the helper's data is answered with the workflow's
 * state after the write, under this key of the result's `_meta`: `{workflow_id, text}`, the text
 * get_workflow {workflow_id} answers, cut at WORKFLOW_STATE_CHARS. The helper keeps it for the
 * hooks' session-start context instead of asking get_workflow again after every task.
 */
export const WORKFLOW_STATE_META = "waymark/workflow_state";
/** The session-start context shows at most 1,500 characters of it. */
export const WORKFLOW_STATE_CHARS = 4096;

export const REVIEW_LIMITS = {
  /** Commits listed per task; `commits_omitted` counts the rest. */
  COMMITS: 200,
  SUBJECT_CHARS: 200,
  /** Short commit ids as git abbreviates them (at least 7 digits). */
  SHORT_SHA: /^[0-9a-f]{7,64}$/,
} as const;
