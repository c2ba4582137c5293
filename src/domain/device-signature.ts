/**
 * @module domain/device-signature
 * Whether helper data was signed by a device the account approved: the edge's half of
 * @waymark/protocol/device-signature. The signature must name a device of this account that is
 * not revoked, be recent (a copy kept for later stops working), and verify (Ed25519, Web Crypto)
 * over exactly this data for exactly this subject (the workflow a task starts in, the task a call
 * completes): moved onto another task or other data, it fails. Anything else is the client's
 * claim, with the reason in words a reviewer can act on. The workflow object computes the bytes
 * from what it received (@waymark/protocol/device-signature, as the helper signs them); the
 * account object, which holds the devices, gives the verdict with the protocol's one Ed25519
 * check, the same `waymark verify` runs on the payloads the export carries.
 */
import {
  type DeviceSignature,
  deviceFingerprint,
  ed25519Verifies,
  type PairingRequest,
  pairingBytes,
} from "@waymark/protocol/device-signature";
import { type DeviceRef, deviceText } from "@waymark/protocol/provenance-wording";
import { LIMITS } from "../limits";

/** An approved device as the account's registry gives it to a verification. */
export interface DeviceKey {
  name: string;
  fingerprint: string;
  /** The Ed25519 public key, 32 bytes base64url. */
  key: string;
  /** ISO time; a revoked device's signatures no longer count. */
  revoked_at: string | null;
}

/**
 * The account's devices as a workflow object keeps them to verify signatures without asking the
 * account each time: `generation` grows with every approval and revocation (devices are never
 * deleted and a revocation is final), so a set never replaces a newer one.
 */
export interface DeviceKeySet {
  generation: number;
  devices: DeviceKey[];
}

/** A signature a workflow object accepted, reported to the account (the device's "last used"). */
export interface DeviceUse {
  fingerprint: string;
  at: number;
}

export type SignatureVerdict = { ok: true; device: DeviceRef; nonce: string; start_nonce: string | null } | { ok: false; reason: string };

export const NOT_SIGNED = "not signed by a device";

/** `device`: the account's device for `signature.key`, or null when it has none. */
export async function verifyDeviceSignature(
  signature: DeviceSignature,
  message: Uint8Array,
  device: DeviceKey | null,
  now: number,
): Promise<SignatureVerdict> {
  const fingerprint = deviceFingerprint(signature.key);
  if (!device || device.fingerprint !== fingerprint) {
    return { ok: false, reason: `signed by device ${fingerprint}, which this account has not approved` };
  }
  if (device.revoked_at !== null) return { ok: false, reason: `signed by ${deviceText(device)}, revoked ${device.revoked_at}` };
  if (Math.abs(now - signature.signed_at) > LIMITS.DEVICE_SIGNATURE_SKEW_MS) {
    return {
      ok: false,
      reason: `signed at ${new Date(signature.signed_at).toISOString()}, more than ${LIMITS.DEVICE_SIGNATURE_SKEW_MS / 60_000} minutes from the edge's clock`,
    };
  }
  if (!(await ed25519Verifies(signature.key, signature.signature, message))) {
    return { ok: false, reason: "its device signature does not verify for this task and data" };
  }
  return { ok: true, device: { name: device.name, fingerprint }, nonce: signature.nonce, start_nonce: signature.start_nonce ?? null };
}

/**
 * Why a pairing request cannot be taken (`field: rule`), or null: the device must prove it holds
 * the key it asks to pair (its signature over the request), recently.
 */
export async function pairingProblem(request: PairingRequest, now: number): Promise<string | null> {
  if (Math.abs(now - request.requested_at) > LIMITS.DEVICE_SIGNATURE_SKEW_MS) {
    return `requested_at: must be within ${LIMITS.DEVICE_SIGNATURE_SKEW_MS / 60_000} minutes of the server's clock (check the device's clock)`;
  }
  const { proof, ...claims } = request;
  return (await ed25519Verifies(request.key, proof, pairingBytes(claims)))
    ? null
    : "proof: must be the device key's signature over the request";
}
