/**
 * @module device-signature
 * What a device's helper signs, so the edge can tell the figures a helper computed on an approved
 * device from figures any client could send. Both sides build the signed bytes here (the helper
 * signs them with node:crypto, the edge verifies them with Web Crypto), so they cannot disagree.
 *
 * A device key is an Ed25519 key pair the helper keeps in the user's config directory; the owner
 * approves its public key for an account in the dashboard (Devices). A signature covers, as
 * canonical JSON: this format's version; the tool (`start_task` or `complete_task`); its subject
 * (the workflow a task starts in, the task a call completes); when it was made and a random nonce;
 * for complete_task the nonce of the task's own signed start; and the SHA-256 of the canonical JSON
 * of the data (start_task: the snapshot; complete_task: the changes and the metrics, or null).
 * So a signature proves which device computed exactly this data for exactly this task: moved to
 * another task, another workflow or other data, it no longer verifies.
 *
 * The signature travels inside the data's `source` block (`source.device`) and is taken out
 * before the digest is computed. A key is named by its SSH-style fingerprint (`SHA256:` and the
 * unpadded base64 of the SHA-256 of the 32-byte public key), which `waymark device` prints and the
 * dashboard shows, so the owner can compare the two before approving.
 */
import { createHash } from "node:crypto";
import { canonicalJson } from "./chain";

export const DEVICE_SIGNATURE_VERSION = "waymark-device-signature-v1";
export const DEVICE_PAIRING_VERSION = "waymark-device-pairing-v1";

export type SignedTool = "start_task" | "complete_task";

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

/** `SHA256:…`, as ssh-keygen -l prints a key's fingerprint. */
export function deviceFingerprint(key: string): string {
  const digest = createHash("sha256").update(base64UrlToBytes(key)).digest("base64");
  return `SHA256:${digest.replace(/=+$/, "")}`;
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

/** The bytes an Ed25519 device signature covers. */
export function signedBytes(tool: SignedTool, subject: string, claims: SignatureClaims, data: unknown): Uint8Array {
  const digest = createHash("sha256").update(canonicalJson(data), "utf8").digest("hex");
  const message = {
    version: DEVICE_SIGNATURE_VERSION,
    tool,
    subject,
    key: claims.key,
    signed_at: claims.signed_at,
    nonce: claims.nonce,
    start_nonce: claims.start_nonce ?? null,
    digest,
  };
  return new TextEncoder().encode(canonicalJson(message));
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
