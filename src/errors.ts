/**
 * @module errors
 * Stable error codes every tool failure carries (documented in docs/limits.md), and the Result
 * type Durable Object RPC returns instead of throwing.
 */
export const ERROR_CODES = [
  "INPUT_VALIDATION_ERROR",
  "NOT_FOUND",
  "CONFLICT",
  "UNAUTHORIZED",
  "PAYLOAD_TOO_LARGE",
  "QUOTA_EXCEEDED",
  "INTERNAL",
] as const;
export type ErrorCode = (typeof ERROR_CODES)[number];

export interface Failure {
  ok: false;
  code: ErrorCode;
  message: string;
}
export interface Success<T> {
  ok: true;
  value: T;
}
/** Durable Object RPC returns results instead of throwing: class identity does not survive RPC. */
export type Result<T> = Success<T> | Failure;

export function ok<T>(value: T): Success<T> {
  return { ok: true, value };
}

export function fail(code: ErrorCode, message: string): Failure {
  return { ok: false, code, message };
}

export class WaymarkError extends Error {
  constructor(
    readonly code: ErrorCode,
    message: string,
  ) {
    super(message);
  }
  toFailure(): Failure {
    return fail(this.code, this.message);
  }
}

/**
 * Something this account has no such thing of: an id of another account gets the same answer as
 * an unknown one, so nothing leaks. `field` names the input, `what` the thing and its id.
 */
export function notFound(field: string, what: string): Failure {
  return fail("NOT_FOUND", `${field}: no ${what} in this account`);
}
