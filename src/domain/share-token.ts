/**
 * @module domain/share-token
 * Share tokens: read-only access to one workflow's page, exports and live feed.
 *
 *   token: sh_<the workflow id's 20-char random part>_<8-char generation>_<26-char MAC>
 *
 * The first part routes the token to its WorkflowObject with no lookup. The generation
 * is derived from the link's random salt (a new one at every rotation) and the MAC is
 * HMAC(share secret, workflow id + generation): the Worker rejects a forged or mangled
 * token before any object is touched (`verifiedShareWorkflow`), and the object, which
 * stores only the salt and the SHA-256 of the whole token (workflow/share), still decides
 * revoke, rotate and expiry. If the secret changes, existing links stop verifying and must be
 * rotated. The secret also keys the dashboard's session cookies (http/session).
 */
import { base32, constantTimeEqual, hmacSha256, sha256, sha256Hex } from "../crypto";

const SHARE_TOKEN = /^sh_([a-z2-7]{20})_([a-z2-7]{8})_([a-z2-7]{26})$/;

/** The secret must carry at least this many bytes of entropy in production. */
export const MIN_SHARE_SECRET_BYTES = 32;

/** The workflow a share token points at, or null when it does not have a share token's shape (nothing is verified). */
export function workflowOfShareToken(token: string): string | null {
  const match = SHARE_TOKEN.exec(token);
  return match ? `wf_${match[1]}` : null;
}

/**
 * The key for share tokens and session cookies: WAYMARK_SHARE_SECRET, at least 32 bytes.
 * In development (`npm start` sets WAYMARK_DEV_TOKEN) one is derived from the dev token
 * when none is set. Anything else throws: the Worker answers every request with the
 * reason rather than signing links with a guessable key.
 */
export async function shareSecret(env: Env): Promise<string> {
  const problem = shareSecretProblem(env);
  if (problem) throw new Error(problem);
  return env.WAYMARK_SHARE_SECRET || sha256Hex(`waymark-share-secret\n${env.WAYMARK_DEV_TOKEN}`);
}

/** Why the configured share secret cannot be used, or null. */
export function shareSecretProblem(env: Pick<Env, "WAYMARK_SHARE_SECRET" | "WAYMARK_DEV_TOKEN">): string | null {
  const secret = env.WAYMARK_SHARE_SECRET ?? "";
  if (secret === "" && env.WAYMARK_DEV_TOKEN) return null;
  if (secret === "")
    return `WAYMARK_SHARE_SECRET is not set: set it to ${MIN_SHARE_SECRET_BYTES}+ random bytes (wrangler secret put WAYMARK_SHARE_SECRET)`;
  const bytes = new TextEncoder().encode(secret).length;
  if (bytes < MIN_SHARE_SECRET_BYTES) {
    return `WAYMARK_SHARE_SECRET is ${bytes} bytes: it must be at least ${MIN_SHARE_SECRET_BYTES} (e.g. openssl rand -base64 48)`;
  }
  return null;
}

async function shareMac(secret: string, workflowId: string, generation: string): Promise<string> {
  return base32(await hmacSha256(secret, `share-token\n${workflowId}\n${generation}`), 26);
}

/** The token for a workflow and salt under `secret`: deterministic, so the owner can be shown it again. */
export async function deriveShareToken(secret: string, workflowId: string, salt: string): Promise<string> {
  const generation = base32(await sha256(`share-generation\n${salt}`), 8);
  return `sh_${workflowId.slice(3)}_${generation}_${await shareMac(secret, workflowId, generation)}`;
}

/**
 * The workflow of a token this deployment minted, or null for anything else (wrong shape,
 * forged or mangled MAC, another secret). Needs no storage: the Worker calls it before it
 * touches any object. Whether the link is still active is the object's answer.
 */
export async function verifiedShareWorkflow(secret: string, token: string): Promise<string | null> {
  const match = SHARE_TOKEN.exec(token);
  if (!match?.[1] || !match[2] || !match[3]) return null;
  const workflowId = `wf_${match[1]}`;
  return constantTimeEqual(match[3], await shareMac(secret, workflowId, match[2])) ? workflowId : null;
}
