/**
 * Every bound Waymark enforces, in one place (docs/limits.md's table is this file).
 * Text bounds are in characters; MAX_BODY_BYTES is checked before a request is parsed.
 */
export const LIMITS = {
  MAX_BODY_BYTES: 8 * 1024 * 1024,
  // Objects and arrays in one /mcp body: the helper's largest lists need ~250,000; parsing more is
  // how a small body becomes hundreds of MiB of isolate memory ([{},{},…]).
  MAX_JSON_CONTAINERS: 400_000,
  NAME: 200,
  DESCRIPTION: 4000,
  LONG_TEXT: 4000,
  SHORT_TEXT: 1000,
  LIST_ITEM: 1000,
  LIST_ITEMS: 50,
  PLAN_STEPS: 100,
  AREAS: 30,
  AREA: 200,
  OPTIONS: 20,
  METADATA_JSON_BYTES: 4096,
  IDEMPOTENCY_KEY: 200,
  CHANGE_ENTRIES: 25_000,
  PATH_BYTES: 4096,
  TASKS_PER_WORKFLOW: 5000,
  LOGS_PER_TASK: 200,
  MILESTONES_ADVISED: 5,
  EVENTS_PAGE: 500,
  // Metrics reported at complete_task.
  METRIC_TOKENS: 10_000_000_000,
  METRIC_COST_USD: 1_000_000,
  // Memory: the account's full-text index of past work.
  MEMORY_DOCUMENTS: 50_000,
  MEMORY_TITLE: 300,
  MEMORY_BODY: 2000,
  SEARCH_QUERY: 500,
  SEARCH_TERMS: 32,
  SEARCH_RESULTS: 20,
  RELATED_ITEMS: 3,
  RELATED_TEXT: 160,
  // start_task's related-work lookup ranks only the newest documents, so its cost stays the same however large the index grows.
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
  WORKFLOW_BYTES: 64 * 1024 * 1024,
  ACCOUNT_WORKFLOWS: 10_000,
  ACCOUNT_BYTES: 2 * 1024 * 1024 * 1024,
  // Live followers: bounded catch-up and sockets.
  LIVE_PAGE_BYTES: 512 * 1024,
  LIVE_SOCKETS_PER_WORKFLOW: 100,
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
  // Reviewer feedback: one comment's length, comments per workflow, and the share of a tool result it may take.
  FEEDBACK_TEXT: 2000,
  FEEDBACK_PER_WORKFLOW: 1000,
  FEEDBACK_RESULT_BYTES: 400,
  // Owner view: workflows per dashboard page; paths the account's path index keeps per workflow.
  DASHBOARD_PAGE: 25,
  PATHS_PER_WORKFLOW: 5000,
  // Workflows one dashboard session may follow live (each is closed at sign-out).
  OWNER_FOLLOWS: 200,
  // A file path searched for (dashboard and REST).
  PATH_QUERY: 1024,
  // Paged reads (exports, the workflow resource, pages): entries per page, and bytes per page
  // past its first entry (one entry always fits, so a page is at most one entry over).
  READ_PAGE_ITEMS: 200,
  READ_PAGE_BYTES: 1024 * 1024,
} as const;
