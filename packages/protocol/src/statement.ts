/**
 * @module statement
 * The deployment's signed statement about an export: which workflow, how many events, the chain
 * head they end on, the repository, when, and a digest of each of the export's members (so any
 * change to any field breaks the signature). The edge signs it with the deployment's Ed25519 key
 * (Web Crypto); `waymark verify` checks it against the deployment's published public keys
 * (node:crypto). Both sides build the signed bytes and the digests here, so they cannot disagree.
 *
 * A key is identified by its RFC 7638 JWK thumbprint, so a key id needs no registry: whoever holds
 * the public key can compute it, and a retired key keeps its id for as long as it is published.
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
} from "./export-members";
export type { SignedStatement, StatementPayload } from "./views/export";

/** Where every deployment publishes its public signing keys, current and retired. */
export const SIGNING_KEYS_PATH = "/.well-known/waymark-signing-keys.json";

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

/** A public Ed25519 key as the deployment publishes it (a JWK with its thumbprint and status). */
export interface PublishedKey {
  kty: "OKP";
  crv: "Ed25519";
  x: string;
  kid: string;
  alg: "EdDSA";
  use: "sig";
  /** "current" signs new statements; a "retired" key only verifies statements it signed before. */
  status: "current" | "retired";
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
 * cannot be accepted: an unknown key, a key that is not the statement's, a bad signature.
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
  return good ? { ok: true, key } : { ok: false, problem: `statement.signature: does not match the statement under key ${key.kid}` };
}

/** The published keys of a `/.well-known/waymark-signing-keys.json` document, checked member by member. */
export function parsePublishedKeys(document: unknown): PublishedKey[] {
  const keys = (document as { keys?: unknown } | null)?.keys;
  if (!Array.isArray(keys)) throw new Error("keys: must be an array of public keys");
  return keys.map((key: unknown, i) => {
    const k = key as Partial<PublishedKey> | null;
    if (k?.kty !== "OKP" || k.crv !== "Ed25519" || typeof k.x !== "string" || typeof k.kid !== "string") {
      throw new Error(`keys[${i}]: must be an Ed25519 public key (kty "OKP", crv "Ed25519", x, kid)`);
    }
    return {
      kty: "OKP",
      crv: "Ed25519",
      x: k.x,
      kid: k.kid,
      alg: "EdDSA",
      use: "sig",
      status: k.status === "current" ? "current" : "retired",
    };
  });
}
