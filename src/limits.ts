/**
 * Every bound Waymark enforces, in one place (docs/limits.md's table is this file).
 * Text bounds are in characters; MAX_BODY_BYTES is checked before a request is parsed.
 */
import { DEVICE_SIGNATURE_SKEW_MS } from "@waymark/protocol/device-signature";
import { TOOL_LIMITS } from "@waymark/protocol/tool-limits";
import { WIRE_LIMITS } from "@waymark/protocol/wire-constants";

export const LIMITS = {
  MAX_BODY_BYTES: 8 * 1024 * 1024,
  // Objects and arrays in one /mcp body: the helper's largest lists need ~250,000; parsing more is
  // how a small body becomes hundreds of MiB of isolate memory ([{},{},…]).
  MAX_JSON_CONTAINERS: 400_000,
  // The tools' input bounds (text lengths, list sizes, search): part of the protocol's contract.
  ...TOOL_LIMITS,
  CHANGE_ENTRIES: 25_000,
  // The paths a task's record names as dirty at its start (repository.dirty_paths_at_start), so that
  // `waymark verify --repo` can decide every difference: past either bound none are named.
  DIRTY_PATHS_NAMED: 1000,
  DIRTY_PATHS_NAMED_BYTES: 128 * 1024,
  PATH_BYTES: 4096,
  TASKS_PER_WORKFLOW: 5000,
  LOGS_PER_TASK: 200,
  // A log entry written within this many events of its task's start is found by scanning the log
  // table's key from the task's start to the time of that event (docs/storage.md, "A task's log
  // entries"), not through the task index: at most about this many rows read per task (of the three tables).
  LOG_WINDOW_EVENTS: 100,
  MILESTONES_ADVISED: 5,
  EVENTS_PAGE: 500,
  // Metrics reported at complete_task.
  METRIC_TOKENS: 10_000_000_000,
  METRIC_COST_USD: 1_000_000,
  // Shell commands the helper's hooks observed during a task (docs/evidence.md): how many one task
  // records, the bytes of one command line (cut by the helper, refused here), the longest duration.
  // Part of the helper's wire contract: the helper bounds what it sends by the same values.
  COMMANDS_PER_TASK: WIRE_LIMITS.COMMANDS,
  COMMAND_BYTES: WIRE_LIMITS.COMMAND_BYTES,
  COMMAND_DURATION_MS: WIRE_LIMITS.COMMAND_DURATION_MS,
  // Memory: the account's full-text index of past work.
  MEMORY_DOCUMENTS: 50_000,
  MEMORY_TITLE: 300,
  MEMORY_BODY: 2000,
  SEARCH_TERMS: 32,
  RELATED_ITEMS: 3,
  RELATED_TEXT: 160,
  // start_task's related-work lookup ranks only the newest documents (its ranking stays the same however large the index grows;
  // its rows read grow with the documents matching its terms: docs/storage.md, "What a request reads").
  RELATED_WINDOW: 5_000,
  // Webhooks (per account).
  WEBHOOKS: 10,
  WEBHOOK_URL: 2048,
  WEBHOOK_ATTEMPTS: 6,
  WEBHOOK_QUEUE: 1000,
  WEBHOOK_TIMEOUT_MS: 10_000,
  WEBHOOK_RETRY_BASE_MS: 30_000,
  WEBHOOK_ERROR: 300,
  // Quotas and retention (workflow object and account index).
  IDEMPOTENCY_TTL_MS: 7 * 24 * 3600 * 1000,
  WORKFLOW_EVENTS: 100_000,
  WORKFLOW_BYTES: 128 * 1024 * 1024,
  ACCOUNT_WORKFLOWS: 10_000,
  ACCOUNT_BYTES: 2 * 1024 * 1024 * 1024,
  // Live followers: bounded catch-up and sockets.
  LIVE_PAGE_BYTES: 512 * 1024,
  LIVE_SOCKETS_PER_WORKFLOW: 100,
  // The owner's own pool per workflow (dashboard pages, MCP subscriptions): a link's readers never fill it.
  LIVE_OWNER_SOCKETS_PER_WORKFLOW: 100,
  LIVE_SOCKETS_PER_CLIENT: 8,
  // Scope check: automaton steps one complete_task may spend matching paths against areas.
  SCOPE_MATCH_STEPS: 10_000_000,
  // get_workflow {workflow_id}: completed tasks listed when resuming.
  RESUME_COMPLETED: 20,
  // Bodies of every request but /mcp (dashboard forms, share and webhook APIs), refused before parsing.
  API_BODY_BYTES: 8192,
  // Managed API tokens: active tokens per account, name length.
  API_TOKENS: 100,
  TOKEN_NAME: 100,
  // Devices whose helpers sign (account/devices): approved devices per account, a device's name,
  // pairing requests waiting for approval (per credential that asked, so one token cannot fill the
  // queue for the others, and per account, a storage bound the owner can empty on the Devices page)
  // and how long a pairing code lives, and how far a signature's time (and a pairing request's) may
  // be from the edge's clock either way.
  DEVICES: 50,
  /** The newest devices (approved or revoked) a workflow object keeps to verify signatures itself. */
  DEVICE_KEYS_KEPT: 200,
  /**
   * How long a workflow object's copy of the account's device keys is trusted: the account pushes
   * every approval and revocation to the workflows that fetched a copy within this time, and a
   * workflow fetches again once it is over (docs/provenance.md, "Devices").
   */
  DEVICE_KEYS_FRESH_MS: 10 * 60 * 1000,
  DEVICE_NAME: 100,
  DEVICE_PAIRINGS_PER_CREDENTIAL: 3,
  DEVICE_PAIRINGS: 100,
  DEVICE_PAIRING_TTL_MS: 10 * 60 * 1000,
  DEVICE_SIGNATURE_SKEW_MS,
  // Reviewer feedback: one comment's length, comments per workflow, and the share of a tool result it may take.
  FEEDBACK_TEXT: 2000,
  FEEDBACK_PER_WORKFLOW: 1000,
  FEEDBACK_RESULT_BYTES: 400,
  // Owner view: workflows per dashboard page; paths the account's path index keeps per workflow.
  DASHBOARD_PAGE: 25,
  PATHS_PER_WORKFLOW: 5000,
  // A path lookup reads at most this many of the newest path sets (one per task completion, its paths
  // packed in one row): older completions are not found (docs/storage.md, account/path-index).
  PATH_SETS_SCANNED: 20_000,
  // …and at most this many bytes of them (a set's part may hold up to STATEMENT_CHUNK_BYTES): well
  // above 20,000 completions of 20 paths, so long paths cannot make one lookup read gigabytes.
  PATH_SETS_SCANNED_BYTES: 64 * 1024 * 1024,
  // Commits the account's commit index keeps per workflow; commits one GET /api/commits may ask about
  // (a pull request's range: GitHub lists at most 250 commits of a pull request).
  COMMITS_PER_WORKFLOW: 5000,
  COMMITS_QUERY: 250,
  // A GitHub webhook delivery's body (pull_request_review(_comment) payloads are tens of KiB), and
  // how long its delivery id is remembered so that a redelivery is answered without a second item.
  GITHUB_WEBHOOK_BODY_BYTES: 512 * 1024,
  GITHUB_DELIVERIES_KEPT_MS: 7 * 24 * 60 * 60 * 1000,
  // Workflows one dashboard session may follow live (each is closed at sign-out).
  OWNER_FOLLOWS: 200,
  // Dashboard sessions open at once per credential (the oldest of that credential ends first;
  // another credential's sessions are never touched).
  SESSIONS_PER_CREDENTIAL: 20,
  // A file path searched for (dashboard and REST).
  PATH_QUERY: 1024,
  // Paged reads (exports, the workflow resource, pages): entries per page, and bytes per page
  // past its first entry (one entry always fits, so a page is at most one entry over).
  READ_PAGE_ITEMS: 200,
  READ_PAGE_BYTES: 1024 * 1024,
  // A task's file lists, read a page at a time (the JSON export, the task's file pages): entries
  // per page, within READ_PAGE_BYTES too. Larger than READ_PAGE_ITEMS: entries are single paths.
  FILE_PAGE_ITEMS: 2000,
  // ── Stored values. Durable Object SQLite refuses any string, blob or row over 2 MB, bound
  // parameters included (SQLITE_TOOBIG), and a refused write fails every retry the same way. So
  // nothing the objects store or bind grows with a task's size; each value's bound follows. ──
  // What one stored or bound value may take (the platform's limit): storage/sql refuses anything
  // larger with a message naming it, before SQLite does. Every bound below keeps values well under.
  STORED_VALUE_BYTES: 2_000_000,
  // A list bound into one statement (a JSON array read with json_each: snapshot entries, file rows,
  // path index rows) is cut into chunks of at most this many bytes, one statement each.
  STATEMENT_CHUNK_BYTES: 256 * 1024,
  // A task's files as one value shows them (its events, complete_task's result and its idempotent
  // replay, get_workflow, timeline and export rows): the first files in path order whose entries in
  // all lists take at most this; the record keeps every file as a row (`files_changed.more` counts
  // the rest): about a thousand files of ordinary paths. With the largest agent text (~0.9 MB of
  // outcome, metadata and goal at 3 bytes a character), 200 commits (~0.13 MB), and the warnings,
  // overlaps and truncation summary below at their bounds, a task's event stays under 1.6 MB.
  VIEW_FILE_BYTES: 256 * 1024,
  // Overlaps with concurrent tasks in one value (the rest are rows too, `verification.more`).
  VIEW_OVERLAP_BYTES: 32 * 1024,
  // Warnings kept per task, and the characters of each: a later task's overlap adds one each time.
  TASK_WARNINGS: 30,
  WARNING_CHARS: 1000,
  // The helper's per-directory summary of a list too large to send, as stored: directories past
  // this many bytes (paths of up to PATH_BYTES each) are counted in its `other`.
  TRUNCATION_BYTES: 64 * 1024,
  // What one request of a workflow page (or its live blocks) renders: tasks of the timeline per
  // page (the rest are on the next pages), files listed per task (the rest on the task's files
  // page, FILES_PAGE rows at a time), and the rendered blocks each Worker isolate keeps for
  // re-reads of the same state. Anonymous reads are also rate-limited per client and per link
  // (PAGE_CLIENT_LIMITER, PAGE_LINK_LIMITER, EXPORT_LIMITER, EXPORT_SHARE_LIMITER in wrangler.toml;
  // the order they are charged in: src/routes/read-budget.ts).
  PAGE_TASKS: 100,
  PAGE_FILES: 100,
  FILES_PAGE: 1000,
  PAGE_CACHE_BYTES: 16 * 1024 * 1024,
  PAGE_CACHE_ENTRIES: 64,
  // What a shared page's live script may fetch by itself: blocks fetches in any window of
  // LIVE_FETCH_WINDOW_MS. PAGE_CLIENT_LIMITER grants a client 20 reads per 10 s; a page that spent
  // them all on following a busy agent would then wait out a refusal (10 s behind), and its
  // reader could not reload it or open a task's files. The owner's pages are not limited.
  LIVE_FETCHES: 12,
  LIVE_FETCH_WINDOW_MS: 10_000,
  // MCP subscriptions (subscriptions/listen, resources/subscribe): workflows one stream follows, how
  // often its credential is checked again (a revoked one ends the stream), and its longest life.
  SUBSCRIPTION_URIS: 10,
  SUBSCRIPTION_RECHECK_MS: 30_000,
  SUBSCRIPTION_MAX_MS: 60 * 60 * 1000,
  // An OAuth client's metadata document (CIMD): its size, the time to fetch it, the redirects followed.
  CLIENT_METADATA_BYTES: 5 * 1024,
  CLIENT_METADATA_FETCH_MS: 5000,
  CLIENT_METADATA_REDIRECTS: 3,
  // Insights (docs/insights.md): no figure is shown from fewer tasks than INSIGHT_MIN_TASKS (a share of
  // 2 of 3 tasks says nothing a reader should act on); durability "N days later" reads the first
  // observation INSIGHT_DURABILITY_DAYS or more after a task; at most INSIGHT_GROUPS distinct
  // agent × model × repository groups are kept apart per account (later ones are counted together:
  // model names are the client's words); a period spans at most INSIGHT_PERIOD_DAYS days.
  INSIGHT_MIN_TASKS: 5,
  INSIGHT_DURABILITY_DAYS: 14,
  INSIGHT_GROUPS: 200,
  INSIGHT_PERIOD_DAYS: 731,
  INSIGHT_NAME_CHARS: 200,
} as const;
