/**
 * @module iso-time
 * Stored times (epoch milliseconds) as the read model shows them: ISO 8601 in UTC.
 */
export function isoTime(ms: number): string {
  return new Date(ms).toISOString();
}

/** null stays null: a time that has not happened (not expired, never revoked). */
export function isoTimeOrNull(ms: number | null): string | null {
  return ms === null ? null : isoTime(ms);
}
