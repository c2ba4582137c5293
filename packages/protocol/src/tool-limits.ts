/**
 * @module tool-limits
 * The bounds of the tools' inputs (text lengths, list sizes), part of the contract: the schemas
 * of ./tools enforce them, and src/limits.ts spreads them into LIMITS, the one table of every
 * bound the Worker enforces, so they are written once and the protocol imports nothing of src/.
 * Text bounds are in characters.
 */
export const TOOL_LIMITS = {
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
  // get_workflow's search of past work.
  SEARCH_QUERY: 500,
  SEARCH_RESULTS: 20,
} as const;
