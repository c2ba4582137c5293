/**
 * @module signing
 * The deployment's signing keys: Ed25519 through Web Crypto. WAYMARK_SIGNING_KEYS holds a JSON
 * array of JWKs: the first carries its private part (`d`) and signs every new statement; the
 * others are retired keys, published so that statements they signed stay verifiable (their `d`,
 * if still present, is never used). Each entry may carry the period it signs in (`not_before`,
 * `not_after`, ISO 8601 UTC: `npm run signing-key -- --rotate` sets them) and be marked
 * compromised (`compromised_at`), which the published document says and `waymark verify`
 * enforces (@waymark/protocol/statement). The current key must be in its period and not
 * compromised: otherwise the deployment stops with the reason rather than sign. In development (`npm start` sets WAYMARK_DEV_TOKEN) a key is
 * derived from the dev token when none is set, as the share secret is; `npm start` itself keeps a
 * generated key under .wrangler/. Anywhere else a missing or malformed key stops the deployment
 * with the reason (http/guard), rather than signing with a guessable key or not at all.
 */
import {
  keyLifetime,
  keyThumbprint,
  type PublishedKey,
  type SignedStatement,
  type StatementPayload,
  statementBytes,
} from "@waymark/protocol/statement";
import { base64Url, sha256 } from "./crypto";

interface Ed25519Jwk {
  kty: "OKP";
  crv: "Ed25519";
  x: string;
  d?: string;
}

/** A configured key: its JWK and what is published about it. */
interface ConfiguredKey {
  jwk: Ed25519Jwk;
  lifetime: Pick<PublishedKey, "status" | "not_before" | "not_after">;
}

interface SigningKeys {
  signer: CryptoKey;
  kid: string;
  published: PublishedKey[];
  lifetime: ConfiguredKey["lifetime"];
}

/** PKCS #8 prefix of an Ed25519 private key: the 32-byte seed follows it (RFC 8410). */
const ED25519_PKCS8_PREFIX = [0x30, 0x2e, 0x02, 0x01, 0x00, 0x30, 0x05, 0x06, 0x03, 0x2b, 0x65, 0x70, 0x04, 0x22, 0x04, 0x20];

const BASE64URL = /^[A-Za-z0-9_-]{43}$/;

/** Why WAYMARK_SIGNING_KEYS cannot be used, or null (development without it derives a key). */
export function signingKeysProblem(env: Pick<Env, "WAYMARK_SIGNING_KEYS" | "WAYMARK_DEV_TOKEN">, now = Date.now()): string | null {
  const raw = env.WAYMARK_SIGNING_KEYS ?? "";
  if (raw === "") {
    return env.WAYMARK_DEV_TOKEN
      ? null
      : "WAYMARK_SIGNING_KEYS is not set: generate a key with `npm run signing-key` and store it with `wrangler secret put WAYMARK_SIGNING_KEYS`";
  }
  const parsed = parsedKeys(raw);
  if (typeof parsed === "string") return `WAYMARK_SIGNING_KEYS: ${parsed}`;
  const [current] = parsed;
  return current ? currentKeyProblem(current.lifetime, now, false) : null;
}

/** The guard asks signingKeysProblem on every request: the keys are parsed once per configuration (their period is still checked each time). */
let lastParsed: { raw: string; keys: ConfiguredKey[] | string } | null = null;

/** The configured keys, or why they cannot be read. */
function parsedKeys(raw: string): ConfiguredKey[] | string {
  if (lastParsed?.raw !== raw) {
    try {
      lastParsed = { raw, keys: parseKeys(raw) };
    } catch (error) {
      lastParsed = { raw, keys: (error as Error).message };
    }
  }
  return lastParsed.keys;
}

/**
 * The signing key must not be compromised and must be within its period when it signs. A key whose
 * period has not begun yet stops only the exports (`signing`), not the deployment: a few seconds
 * between the clock that made the key and the edge's must not take every page down.
 */
function currentKeyProblem(lifetime: ConfiguredKey["lifetime"], now: number, signing: boolean): string | null {
  const rotate = "rotate it: `npm run -s signing-key -- --rotate` (docs/deploy.md)";
  if (lifetime.status === "compromised") return `WAYMARK_SIGNING_KEYS: key 0 signs, but is marked compromised; ${rotate}`;
  if (signing && lifetime.not_before !== null && now < Date.parse(lifetime.not_before)) {
    return `WAYMARK_SIGNING_KEYS: key 0 signs from ${lifetime.not_before} only (its not_before)`;
  }
  if (lifetime.not_after !== null && now > Date.parse(lifetime.not_after)) {
    return `WAYMARK_SIGNING_KEYS: key 0 stopped signing at ${lifetime.not_after} (its not_after); ${rotate}`;
  }
  return null;
}

function parseKeys(raw: string): ConfiguredKey[] {
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch {
    throw new Error("must be a JSON array of Ed25519 JWKs (npm run signing-key prints one)");
  }
  if (!Array.isArray(parsed) || parsed.length === 0) throw new Error("must be a non-empty JSON array of Ed25519 JWKs");
  return parsed.map((value: unknown, i) => {
    const jwk = value as (Partial<Ed25519Jwk> & Record<string, unknown>) | null;
    if (jwk?.kty !== "OKP" || jwk.crv !== "Ed25519" || typeof jwk.x !== "string" || !BASE64URL.test(jwk.x)) {
      throw new Error(`key ${i}: must be an Ed25519 JWK (kty "OKP", crv "Ed25519", x of 32 bytes base64url)`);
    }
    if (i === 0 && (typeof jwk.d !== "string" || !BASE64URL.test(jwk.d))) {
      throw new Error("key 0 signs, so it must carry its private part d (32 bytes base64url); retired keys follow it");
    }
    const lifetime = keyLifetime({ ...jwk, status: undefined }, `key ${i}`, i === 0 ? "current" : "retired");
    return { jwk: { kty: "OKP", crv: "Ed25519", x: jwk.x, ...(i === 0 ? { d: jwk.d } : {}) }, lifetime };
  });
}

/** The development key: a seed derived from the dev token, so every `npm start` signs with the same key. */
async function developmentKey(devToken: string): Promise<Ed25519Jwk> {
  const seed = await sha256(`waymark-signing-key\n${devToken}`);
  const pkcs8 = new Uint8Array([...ED25519_PKCS8_PREFIX, ...seed]);
  const key = await crypto.subtle.importKey("pkcs8", pkcs8, { name: "Ed25519" }, true, ["sign"]);
  const jwk = (await crypto.subtle.exportKey("jwk", key)) as JsonWebKey;
  return { kty: "OKP", crv: "Ed25519", x: jwk.x ?? "", d: jwk.d ?? "" };
}

async function loadKeys(env: Pick<Env, "WAYMARK_SIGNING_KEYS" | "WAYMARK_DEV_TOKEN">): Promise<SigningKeys> {
  const problem = signingKeysProblem(env);
  if (problem) throw new Error(problem);
  const configured: ConfiguredKey[] = env.WAYMARK_SIGNING_KEYS
    ? parseKeys(env.WAYMARK_SIGNING_KEYS)
    : [{ jwk: await developmentKey(env.WAYMARK_DEV_TOKEN ?? ""), lifetime: { status: "current", not_before: null, not_after: null } }];
  const [current] = configured as [ConfiguredKey, ...ConfiguredKey[]];
  const signer = await crypto.subtle.importKey("jwk", { ...current.jwk, ext: false }, { name: "Ed25519" }, false, ["sign"]);
  const published = configured.map(
    ({ jwk, lifetime }): PublishedKey => ({
      kty: "OKP",
      crv: "Ed25519",
      x: jwk.x,
      kid: keyThumbprint(jwk.x),
      alg: "EdDSA",
      use: "sig",
      ...lifetime,
    }),
  );
  return { signer, kid: keyThumbprint(current.jwk.x), published, lifetime: current.lifetime };
}

/** Imported once per isolate and configuration: signing runs on every export. */
const loaded = new Map<string, Promise<SigningKeys>>();

function keysOf(env: Pick<Env, "WAYMARK_SIGNING_KEYS" | "WAYMARK_DEV_TOKEN">): Promise<SigningKeys> {
  const cacheKey = `${env.WAYMARK_SIGNING_KEYS ?? ""}\n${env.WAYMARK_DEV_TOKEN ?? ""}`;
  let keys = loaded.get(cacheKey);
  if (!keys) {
    keys = loadKeys(env);
    // One configuration per deployment; the bound keeps a test run's many dev tokens from growing it.
    if (loaded.size > 8) loaded.clear();
    loaded.set(cacheKey, keys);
  }
  return keys;
}

/** The public keys, current first, as served at SIGNING_KEYS_PATH. */
export async function publishedKeys(env: Pick<Env, "WAYMARK_SIGNING_KEYS" | "WAYMARK_DEV_TOKEN">): Promise<PublishedKey[]> {
  return (await keysOf(env)).published;
}

/** The id of the key that signs new statements (what pages and the Markdown export name). */
export async function currentKeyId(env: Pick<Env, "WAYMARK_SIGNING_KEYS" | "WAYMARK_DEV_TOKEN">): Promise<string> {
  return (await keysOf(env)).kid;
}

/** Signs a statement with the current key. */
export async function signStatement(
  env: Pick<Env, "WAYMARK_SIGNING_KEYS" | "WAYMARK_DEV_TOKEN">,
  payload: StatementPayload,
): Promise<SignedStatement> {
  const keys = await keysOf(env);
  // The period is checked as each statement is signed too: a key whose not_after passes while the isolate lives stops signing.
  const expired = currentKeyProblem(keys.lifetime, Date.parse(payload.issued_at), true);
  if (expired) throw new Error(expired);
  const signature = new Uint8Array(await crypto.subtle.sign("Ed25519", keys.signer, statementBytes(payload)));
  return { payload, alg: "EdDSA", kid: keys.kid, signature: base64Url(signature) };
}
