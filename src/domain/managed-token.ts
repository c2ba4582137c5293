/**
 * @module domain/managed-token
 * The shape of a managed API token, `wmk_<account>_<id>_<secret>` (src/account/tokens.ts keeps
 * them): recognisable in logs and secret scanners, and the Worker routes its check to the right
 * account object from the token alone. Pure parsing, shared by the Worker's middleware and the
 * account object, so that the middleware imports none of the account object's code.
 */

export const TOKEN_ID_LENGTH = 12;
export const TOKEN_SECRET_LENGTH = 40;
const FORMAT = new RegExp(`^wmk_([a-z0-9][a-z0-9_-]{0,63})_([a-z2-7]{${TOKEN_ID_LENGTH}})_([a-z2-7]{${TOKEN_SECRET_LENGTH}})$`);
const TOKEN_ID = new RegExp(`^[a-z2-7]{${TOKEN_ID_LENGTH}}$`);
/** last_used_at is written at most this often per token (and per device key). */
export const TOUCH_INTERVAL_MS = 60_000;

export interface ManagedTokenRef {
  account: string;
  id: string;
}

/** The account and token id a managed token names, or null when it does not have the format. */
export function parseManagedToken(token: string): ManagedTokenRef | null {
  const match = FORMAT.exec(token);
  return match?.[1] && match[2] ? { account: match[1], id: match[2] } : null;
}

export function isTokenId(value: string): boolean {
  return TOKEN_ID.test(value);
}
