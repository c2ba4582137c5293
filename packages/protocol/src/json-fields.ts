/**
 * @module json-fields
 * Field checks for JSON read from files anyone could have written (Agent Trace records, the
 * repository's Waymark notes): each names the field by its path and the rule it breaks. Checked by
 * hand rather than with a schema library: `waymark blame` reads thousands of ranges on every run
 * and is held to a ratio of `git blame`'s own time, of which loading one would take a share.
 */

/** A field that breaks its rule: `field: rule`, the field named by its path in the document. */
export class FieldError extends Error {}

export type JsonObject = Record<string, unknown>;

export function object(value: unknown, field: string): JsonObject {
  if (typeof value !== "object" || value === null || Array.isArray(value)) throw new FieldError(`${field}: must be an object`);
  return value as JsonObject;
}

export function array(value: unknown, field: string): unknown[] {
  if (!Array.isArray(value)) throw new FieldError(`${field}: must be an array`);
  return value;
}

export function text(value: unknown, field: string, max: number): string {
  if (typeof value !== "string" || value.length === 0 || value.length > max)
    throw new FieldError(`${field}: must be a string of 1 to ${max} characters`);
  return value;
}

export function optionalText(value: unknown, field: string, max: number): string | undefined {
  return value === undefined ? undefined : text(value, field, max);
}

/** A 1-based line number. */
export function line(value: unknown, field: string): number {
  if (!Number.isSafeInteger(value) || (value as number) < 1) throw new FieldError(`${field}: must be a whole number ≥ 1`);
  return value as number;
}

const HEX_COMMIT = /^[0-9a-f]{7,64}$/;
const FULL_COMMIT = /^[0-9a-f]{40}$|^[0-9a-f]{64}$/;

/** A hex commit id, abbreviated or not. */
export function commitId(value: unknown, field: string): string {
  if (typeof value !== "string" || !HEX_COMMIT.test(value)) throw new FieldError(`${field}: must be a hex commit id`);
  return value;
}

/** A full commit id (40 or 64 hex digits). */
export function fullCommitId(value: unknown, field: string): string {
  if (typeof value !== "string" || !FULL_COMMIT.test(value))
    throw new FieldError(`${field}: must be a full hex commit id (40 or 64 digits)`);
  return value;
}
