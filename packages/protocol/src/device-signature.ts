/**
 * @module device-signature
 * What a device's helper signs, and the one check of it, so the edge can tell the figures a
 * helper computed on an approved device from figures any client could send, and `waymark verify`
 * can check them again later against keys pinned outside the server. The helper signs the bytes
 * built here (signedBytes), the edge checks them with ed25519Verifies before its own policy
 * (approved, not revoked, recent), and a verifier checks the kept payload with
 * deviceSignedProblem: one definition of the bytes and of the check. Ed25519 through Web Crypto, which workerd and
 * Node both have.
 *
 * A device key is an Ed25519 key pair the helper keeps in the user's config directory; the owner
 * approves its public key for an account in the dashboard (Devices). A signature covers, as
 * canonical JSON (SignedMessage): this format's version; the tool (`start_task` or
 * `complete_task`); its subject (the workflow a task starts in, the task a call completes); when
 * it was made and a random nonce; for complete_task the nonce of the task's own signed start; and
 * the SHA-256 of the canonical JSON of the data (start_task: the snapshot; complete_task: the
 * changes and the metrics, or null). So a signature proves which device computed exactly this
 * data for exactly this task: moved to another task, another workflow or other data, it no
 * longer verifies.
 *
 * The signature travels inside the data's `source` block (`source.device`) and is taken out
 * before the digest is computed. The edge keeps each payload it accepted whole (DeviceSigned),
 * and the JSON export carries them. A key is named by its SSH-style fingerprint (`SHA256:` and
 * the unpadded base64 of the SHA-256 of the 32-byte public key), which `waymark device` prints
 * and the dashboard shows, so the owner can compare the two before approving.
 */
import { createHash } from "node:crypto";
import { canonicalJson } from "./chain";

export const DEVICE_SIGNATURE_VERSION = "waymark-device-signature-v1";
export const DEVICE_PAIRING_VERSION = "waymark-device-pairing-v1";

export type SignedTool = "start_task" | "complete_task";

/**
 * How far a signature's time may be from the edge's clock when it arrives (a copy kept for later
 * stops working); `waymark verify` holds a kept payload to the same bound against the time its
 * event was recorded.
 */
export const DEVICE_SIGNATURE_SKEW_MS = 10 * 60 * 1000;

/** A signature as the helper sends it, in the data's `source.device`. */
export interface DeviceSignature {
  /** The device's Ed25519 public key: 32 bytes, base64url without padding. */
  key: string;
  /** When the helper signed, ms since the epoch. */
  signed_at: number;
  /** 16 random bytes, base64url without padding. */
  nonce: string;
  /** complete_task: the nonce of the signature the task's start snapshot carried (absent: its start was not signed). */
  start_nonce?: string;
  /** Ed25519 over `signedBytes(…)`: 64 bytes, base64url without padding. */
  signature: string;
}

export type SignatureClaims = Omit<DeviceSignature, "signature">;

/** The shape of each part, for both the edge's schema and the helper's own checks. */
export const DEVICE_KEY_PATTERN = /^[A-Za-z0-9_-]{43}$/;
export const NONCE_PATTERN = /^[A-Za-z0-9_-]{22}$/;
export const SIGNATURE_PATTERN = /^[A-Za-z0-9_-]{86}$/;

export function base64UrlToBytes(text: string): Uint8Array {
  const binary = atob(text.replace(/-/g, "+").replace(/_/g, "/"));
  return Uint8Array.from(binary, (c) => c.charCodeAt(0));
}

export function bytesToBase64Url(bytes: Uint8Array): string {
  let binary = "";
  for (const b of bytes) binary += String.fromCharCode(b);
  return btoa(binary).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}

/**
 * The fingerprints last computed, by key: a signed call asks for its key's three times (the
 * device looked up, the verdict, the payload kept) and an account has a few devices. Bounded: a
 * caller sending many keys only empties it.
 */
const fingerprints = new Map<string, string>();
const FINGERPRINTS_KEPT = 64;

/** `SHA256:…`, as ssh-keygen -l prints a key's fingerprint. */
export function deviceFingerprint(key: string): string {
  const known = fingerprints.get(key);
  if (known !== undefined) return known;
  const digest = createHash("sha256").update(base64UrlToBytes(key)).digest("base64");
  const fingerprint = `SHA256:${digest.replace(/=+$/, "")}`;
  if (fingerprints.size >= FINGERPRINTS_KEPT) fingerprints.clear();
  fingerprints.set(key, fingerprint);
  return fingerprint;
}

type WithSource = { source?: { device?: unknown } & Record<string, unknown> } & Record<string, unknown>;

/** The signature a snapshot or changes report carries, if any. */
export function signatureOf(data: unknown): DeviceSignature | undefined {
  const source = (data as WithSource | null | undefined)?.source;
  return source && typeof source === "object" ? (source.device as DeviceSignature | undefined) : undefined;
}

/** The report as it was signed: without its signature. */
export function withoutSignature<T>(data: T): T {
  const source = (data as WithSource | null | undefined)?.source;
  if (!source || typeof source !== "object" || !("device" in source)) return data;
  const { device: _signature, ...rest } = source;
  return { ...(data as WithSource), source: rest } as T;
}

/** What complete_task's signature covers besides its claims. */
export function completionData(changes: unknown, metrics: unknown): unknown {
  return { changes: withoutSignature(changes), metrics: metrics ?? null };
}

/** What start_task's signature covers besides its claims. */
export function startData(snapshot: unknown): unknown {
  return { snapshot: withoutSignature(snapshot) };
}

/**
 * What a device signature covers, as an object: its canonical JSON (UTF-8) is the signed bytes.
 * `digest` is the SHA-256 (hex) of the canonical JSON of the data (dataDigest).
 */
export interface SignedMessage {
  version: typeof DEVICE_SIGNATURE_VERSION;
  tool: SignedTool;
  subject: string;
  key: string;
  signed_at: number;
  nonce: string;
  start_nonce: string | null;
  digest: string;
}

/** SHA-256 (hex) of the data's canonical JSON (given as `text` when already written): what a signature's message names. */
export function dataDigest(data: unknown, text: string = canonicalJson(data)): string {
  return createHash("sha256").update(text, "utf8").digest("hex");
}

/**
 * The message a signature with these claims covers for `tool` on `subject` over `data`
 * (`dataText`: its canonical JSON, when the caller has written it already: a snapshot can be megabytes).
 */
export function signedMessage(
  tool: SignedTool,
  subject: string,
  claims: SignatureClaims,
  data: unknown,
  dataText: string = canonicalJson(data),
): SignedMessage {
  return {
    version: DEVICE_SIGNATURE_VERSION,
    tool,
    subject,
    key: claims.key,
    signed_at: claims.signed_at,
    nonce: claims.nonce,
    start_nonce: claims.start_nonce ?? null,
    digest: dataDigest(data, dataText),
  };
}

/** The bytes an Ed25519 device signature covers. */
export function signedBytes(tool: SignedTool, subject: string, claims: SignatureClaims, data: unknown): Uint8Array {
  return messageBytes(signedMessage(tool, subject, claims, data));
}

export function messageBytes(message: SignedMessage): Uint8Array {
  return new TextEncoder().encode(canonicalJson(message));
}

/** Public keys as imported, by their text: an account's few devices sign every call. Bounded like the fingerprints. */
type ImportedKey = ReturnType<typeof crypto.subtle.importKey>;
const importedKeys = new Map<string, ImportedKey>();

function publicKey(key: string): ImportedKey {
  let imported = importedKeys.get(key);
  if (!imported) {
    imported = crypto.subtle.importKey("raw", base64UrlToBytes(key), { name: "Ed25519" }, false, ["verify"]);
    if (importedKeys.size >= FINGERPRINTS_KEPT) importedKeys.clear();
    importedKeys.set(key, imported);
  }
  return imported;
}

/** Ed25519 through Web Crypto (the edge's workerd and Node alike); a key or signature that is not one verifies nothing. */
export async function ed25519Verifies(key: string, signature: string, bytes: Uint8Array): Promise<boolean> {
  try {
    return await crypto.subtle.verify({ name: "Ed25519" }, await publicKey(key), base64UrlToBytes(signature), bytes);
  } catch {
    return false;
  }
}

// ── Device-signed evidence: the payload as a record keeps it ─────────────────

export const DEVICE_SIGNED_TYPE = "waymark.device-signed";

/**
 * One device-signed payload kept whole, so anyone can check it with the device's public key and
 * nothing else: the exact message the device signed (`message`, whose canonical JSON is the
 * signed bytes), the data it names by digest (`data`: start_task's `{snapshot}`, complete_task's
 * `{changes, metrics}`), the signature, and the key's fingerprint (its id, as `waymark device`
 * prints it). `workflow_id` and `task_id` say where the record keeps it; they are not signed: the
 * message's subject is (the workflow a task starts in, the task a completion completes), and a
 * completion names its start's nonce. The JSON export carries one per payload the edge accepted
 * as signed (its `device_signed` member); the edge stores and writes it as canonical JSON.
 */
export interface DeviceSigned {
  type: typeof DEVICE_SIGNED_TYPE;
  workflow_id: string;
  task_id: string;
  fingerprint: string;
  message: SignedMessage;
  data: unknown;
  signature: string;
}

/**
 * The kept form (DeviceSigned) of a signature the edge accepted (`message` as it verified it), for
 * the task it belongs to, as canonical JSON: written around the data's canonical JSON as the edge
 * already has it (`dataText`), so a payload of megabytes is not written twice.
 * Members in canonical order: data, fingerprint, message, signature, task_id, type, workflow_id.
 */
export function deviceSignedText(
  where: { workflow_id: string; task_id: string },
  message: SignedMessage,
  dataText: string,
  signature: string,
): string {
  const text = (value: string) => JSON.stringify(value);
  return `{"data":${dataText},"fingerprint":${text(deviceFingerprint(message.key))},"message":${canonicalJson(message)},"signature":${text(signature)},"task_id":${text(where.task_id)},"type":${text(DEVICE_SIGNED_TYPE)},"workflow_id":${text(where.workflow_id)}}`;
}

/**
 * Why a kept payload does not stand on its own, or null: its message must be this format's, name
 * the digest of its data, its fingerprint must be its key's, and its signature must verify under
 * that key over the message. Which keys to trust is the caller's (an allowed-signers file).
 */
export async function deviceSignedProblem(item: DeviceSigned): Promise<string | null> {
  const message = item.message;
  if (message.version !== DEVICE_SIGNATURE_VERSION)
    return `message.version: ${JSON.stringify(message.version)} is not ${DEVICE_SIGNATURE_VERSION}`;
  if (!DEVICE_KEY_PATTERN.test(message.key)) return "message.key: not an Ed25519 public key (32 bytes, base64url)";
  if (item.fingerprint !== deviceFingerprint(message.key)) return `fingerprint: ${item.fingerprint} is not the fingerprint of message.key`;
  if (message.digest !== dataDigest(item.data)) return "data: not what the device signed (its digest differs from message.digest)";
  if (!SIGNATURE_PATTERN.test(item.signature)) return "signature: not an Ed25519 signature (64 bytes, base64url)";
  return (await ed25519Verifies(message.key, item.signature, messageBytes(message)))
    ? null
    : `signature: does not verify under device key ${item.fingerprint}`;
}

/** A pairing request: the device's key and name, and when it asked (the proof is its signature over these bytes). */
export interface PairingRequest {
  key: string;
  name: string;
  requested_at: number;
  /** Ed25519 over `pairingBytes(…)` with the device's key: the helper holds the key it asks to pair. */
  proof: string;
}

export function pairingBytes(request: Omit<PairingRequest, "proof">): Uint8Array {
  return new TextEncoder().encode(
    canonicalJson({ version: DEVICE_PAIRING_VERSION, key: request.key, name: request.name, requested_at: request.requested_at }),
  );
}
