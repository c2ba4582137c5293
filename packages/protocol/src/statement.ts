/**
 * @module statement
 * The deployment's signed statement about an export: which workflow, how many events, the chain
 * head they end on, the repository, whose record it is (the account, as a digest, and the
 * deployment's origin), when, and a digest of each of the export's members (so any change to any
 * field breaks the signature). The edge signs it with the deployment's Ed25519 key (Web Crypto);
 * `waymark verify` checks it against the deployment's published public keys (node:crypto). Both
 * sides build the signed bytes and the digests here, so they cannot disagree.
 *
 * A key is identified by its RFC 7638 JWK thumbprint, so a key id needs no registry: whoever holds
 * the public key can compute it, and a retired key keeps its id for as long as it is published.
 * Each published key carries the period it signed in (`not_before`, `not_after`): a statement
 * issued outside it is refused, so a retired key that leaks cannot sign new statements that pass;
 * and a key can be published as compromised, which refuses everything it signed (a thief can
 * backdate `issued_at`, so no date of its statements can be trusted).
 */
import { createHash, createPublicKey, verify } from "node:crypto";
import { canonicalJson } from "./chain";
import type { SignedStatement, StatementPayload } from "./views/export";

export {
  type ContentDigests,
  EXPORT_MEMBERS,
  type ExportMember,
  STATEMENT_TYPE,
  STATEMENT_VERSION,
  STATEMENT_VERSIONS_READ,
} from "./export-members";
export type { SignedStatement, StatementPayload } from "./views/export";

/** Where every deployment publishes its public signing keys, current and retired. */
export const SIGNING_KEYS_PATH = "/.well-known/waymark-signing-keys.json";

/**
 * Names an account without spelling it out: `sha256:` and the SHA-256 (hex) of
 * "waymark-account\n" + the account's name. Stable for as long as the account is; not a secret
 * (whoever knows or guesses a name can compute it), so `waymark verify --account <name>` can
 * require it.
 */
export function accountDigest(account: string): string {
  return `sha256:${createHash("sha256").update(`waymark-account\n${account}`, "utf8").digest("hex")}`;
}

/**
 * A member's digest: SHA-256 (hex) of its value as compact JSON, JSON.stringify's text (keys in
 * the order the export writes them, no whitespace). Indentation and line breaks in the file do
 * not matter; any change to a value does. The edge computes it piece by piece as a member streams
 * (MemberHasher); a verifier from the parsed file.
 */
export function memberDigest(value: unknown): string {
  return createHash("sha256")
    .update(JSON.stringify(value) ?? "null", "utf8")
    .digest("hex");
}

/** memberDigest of a value written in pieces whose concatenation is its compact JSON. */
export class MemberHasher {
  private readonly hash = createHash("sha256");

  update(compactJson: string): void {
    this.hash.update(compactJson, "utf8");
  }

  digest(): string {
    return this.hash.digest("hex");
  }
}

/** A public Ed25519 key as the deployment publishes it (a JWK with its thumbprint, status and signing period). */
export interface PublishedKey {
  kty: "OKP";
  crv: "Ed25519";
  x: string;
  kid: string;
  alg: "EdDSA";
  use: "sig";
  /**
   * "current" signs new statements; a "retired" key only verifies statements issued within its
   * period; a "compromised" key verifies nothing (its statements are refused).
   */
  status: "current" | "retired" | "compromised";
  /** When the key began to sign (ISO 8601; null: not published, no lower bound). */
  not_before: string | null;
  /** When it stopped (ISO 8601; null: it still signs, or no upper bound was published). */
  not_after: string | null;
}

export interface PublishedKeys {
  keys: PublishedKey[];
}

/** The bytes a signature covers: canonical JSON of the payload, UTF-8. */
export function statementBytes(payload: StatementPayload): Uint8Array {
  return new TextEncoder().encode(canonicalJson(payload));
}

/** RFC 7638 thumbprint of an Ed25519 public key (`x`, base64url): SHA-256 over its required members, base64url. */
export function keyThumbprint(x: string): string {
  return createHash("sha256").update(`{"crv":"Ed25519","kty":"OKP","x":"${x}"}`, "utf8").digest("base64url");
}

export type StatementVerdict = { ok: true; key: PublishedKey } | { ok: false; problem: string };

/**
 * Checks a statement's signature against published keys. Says which key signed it, or why it
 * cannot be accepted: an unknown key, a key that is not the statement's, a bad signature, a key
 * marked compromised, a statement issued outside its key's period.
 */
export function verifyStatement(statement: SignedStatement, keys: readonly PublishedKey[]): StatementVerdict {
  if (statement.alg !== "EdDSA") return { ok: false, problem: `statement.alg: ${JSON.stringify(statement.alg)} is not EdDSA` };
  const key = keys.find((k) => k.kid === statement.kid);
  if (!key) {
    return {
      ok: false,
      problem: `statement.kid: key ${statement.kid} is not among the ${keys.length} key(s) given (${keys.map((k) => k.kid).join(", ") || "none"})`,
    };
  }
  if (keyThumbprint(key.x) !== key.kid) return { ok: false, problem: `key ${key.kid}: its id is not the thumbprint of its public key` };
  let publicKey: ReturnType<typeof createPublicKey>;
  try {
    publicKey = createPublicKey({ key: { kty: "OKP", crv: "Ed25519", x: key.x }, format: "jwk" });
  } catch {
    return { ok: false, problem: `key ${key.kid}: not a valid Ed25519 public key` };
  }
  const signature = Buffer.from(statement.signature, "base64url");
  if (signature.length !== 64) return { ok: false, problem: "statement.signature: not an Ed25519 signature (64 bytes, base64url)" };
  const good = verify(null, statementBytes(statement.payload), publicKey, signature);
  if (!good) return { ok: false, problem: `statement.signature: does not match the statement under key ${key.kid}` };
  const period = periodProblem(key, statement.payload.issued_at);
  return period ? { ok: false, problem: period } : { ok: true, key };
}

/** Why a key's signature on a statement issued at `issuedAt` does not count, or null. */
function periodProblem(key: PublishedKey, issuedAt: unknown): string | null {
  if (key.status === "compromised") {
    return `signature: key ${key.kid} is published as compromised: nothing it signed can be trusted (its holder can date a statement as it likes)`;
  }
  const at = typeof issuedAt === "string" && ISO_TIME.test(issuedAt) ? Date.parse(issuedAt) : Number.NaN;
  if (Number.isNaN(at)) return `statement.payload.issued_at: ${JSON.stringify(issuedAt)} is not an ISO 8601 UTC time`;
  const before = key.not_before === null ? null : Date.parse(key.not_before);
  const after = key.not_after === null ? null : Date.parse(key.not_after);
  if ((before !== null && at < before) || (after !== null && at > after)) {
    return `signature: issued ${issuedAt}, outside the period key ${key.kid} signed in (${key.not_before ?? "…"} to ${key.not_after ?? "now"})`;
  }
  return null;
}

const ISO_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d{1,3})?Z$/;

/** An ISO 8601 UTC time as the key documents write it, or null when absent; throws naming the field otherwise. */
function keyTime(value: unknown, field: string): string | null {
  if (value === undefined || value === null) return null;
  if (typeof value !== "string" || !ISO_TIME.test(value) || Number.isNaN(Date.parse(value))) {
    throw new Error(`${field}: must be an ISO 8601 UTC time like 2026-11-27T13:26:02Z`);
  }
  return value;
}

/**
 * A key's signing period and status from a published key or a WAYMARK_SIGNING_KEYS entry
 * (`not_before`, `not_after`, `status` or `compromised_at`), checked field by field.
 */
export function keyLifetime(
  key: { not_before?: unknown; not_after?: unknown; status?: unknown; compromised_at?: unknown },
  where: string,
  fallback: "current" | "retired",
): Pick<PublishedKey, "status" | "not_before" | "not_after"> {
  const not_before = keyTime(key.not_before, `${where}.not_before`);
  const not_after = keyTime(key.not_after, `${where}.not_after`);
  if (not_before !== null && not_after !== null && Date.parse(not_before) > Date.parse(not_after)) {
    throw new Error(`${where}: not_before (${not_before}) is after not_after (${not_after})`);
  }
  keyTime(key.compromised_at, `${where}.compromised_at`);
  if (key.status !== undefined && key.status !== "current" && key.status !== "retired" && key.status !== "compromised") {
    throw new Error(`${where}.status: must be "current", "retired" or "compromised"`);
  }
  const compromised = key.status === "compromised" || key.compromised_at !== undefined;
  const status = compromised ? "compromised" : key.status === "current" || key.status === "retired" ? key.status : fallback;
  return { status, not_before, not_after };
}

/** The published keys of a `/.well-known/waymark-signing-keys.json` document, checked member by member. */
export function parsePublishedKeys(document: unknown): PublishedKey[] {
  const keys = (document as { keys?: unknown } | null)?.keys;
  if (!Array.isArray(keys)) throw new Error("keys: must be an array of public keys");
  return keys.map((key: unknown, i) => {
    const k = key as (Partial<PublishedKey> & { compromised_at?: unknown }) | null;
    if (k?.kty !== "OKP" || k.crv !== "Ed25519" || typeof k.x !== "string" || typeof k.kid !== "string") {
      throw new Error(`keys[${i}]: must be an Ed25519 public key (kty "OKP", crv "Ed25519", x, kid)`);
    }
    return { kty: "OKP", crv: "Ed25519", x: k.x, kid: k.kid, alg: "EdDSA", use: "sig", ...keyLifetime(k, `keys[${i}]`, "retired") };
  });
}
