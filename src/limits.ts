/**
 * Every bound Waymark enforces, in one place (the README's limits table is this file).
 * Text bounds are in characters; MAX_BODY_BYTES is checked before a request is parsed.
 */
export const LIMITS = {
  MAX_BODY_BYTES: 8 * 1024 * 1024,
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
} as const;
