/**
 * Device keys for the tests that act as a device's helper (or as an attacker imitating one) without
 * running the helper: an Ed25519 key through Web Crypto (in workerd and in Node alike) that signs
 * exactly the bytes @waymark/protocol/device-signature defines, and data signed the way the
 * helper sends it (the signature in the data's `source.device`).
 */
import {
  bytesToBase64Url,
  completionData,
  type DeviceSignature,
  type PairingRequest,
  pairingBytes,
  type SignedTool,
  signedBytes,
  startData,
} from "@waymark/protocol/device-signature";

export interface TestDevice {
  /** The public key, 32 bytes base64url. */
  key: string;
  sign(
    tool: SignedTool,
    subject: string,
    data: unknown,
    options?: { startNonce?: string; signedAt?: number; key?: string },
  ): Promise<DeviceSignature>;
  /** `snapshot` signed for a task starting in `workflowId`, as the helper sends it. */
  signSnapshot<T extends Record<string, unknown>>(snapshot: T, workflowId: string, options?: { signedAt?: number }): Promise<T>;
  /** `changes` (with `metrics`) signed for completing `taskId`, naming the start's nonce. */
  signChanges<T extends Record<string, unknown>>(changes: T, metrics: unknown, taskId: string, startNonce?: string): Promise<T>;
  pairing(name: string, requestedAt?: number): Promise<PairingRequest>;
}

const HELPER = { kind: "helper", version: "0.1.0" } as const;

function nonce(): string {
  return bytesToBase64Url(crypto.getRandomValues(new Uint8Array(16)));
}

export async function testDevice(): Promise<TestDevice> {
  const pair = (await crypto.subtle.generateKey({ name: "Ed25519" }, true, ["sign", "verify"])) as CryptoKeyPair;
  const key = bytesToBase64Url(new Uint8Array((await crypto.subtle.exportKey("raw", pair.publicKey)) as ArrayBuffer));
  const signBytes = async (bytes: Uint8Array) =>
    bytesToBase64Url(new Uint8Array(await crypto.subtle.sign({ name: "Ed25519" }, pair.privateKey, bytes)));
  const device: TestDevice = {
    key,
    async sign(tool, subject, data, options = {}) {
      const claims = {
        key: options.key ?? key,
        signed_at: options.signedAt ?? Date.now(),
        nonce: nonce(),
        ...(options.startNonce ? { start_nonce: options.startNonce } : {}),
      };
      return { ...claims, signature: await signBytes(signedBytes(tool, subject, claims, data)) };
    },
    async signSnapshot(snapshot, workflowId, options = {}) {
      const identified = { ...snapshot, source: HELPER };
      const signature = await device.sign("start_task", workflowId, startData(identified), options);
      return { ...identified, source: { ...HELPER, device: signature } };
    },
    async signChanges(changes, metrics, taskId, startNonce) {
      const identified = { ...changes, source: HELPER };
      const signature = await device.sign("complete_task", taskId, completionData(identified, metrics), { startNonce });
      return { ...identified, source: { ...HELPER, device: signature } };
    },
    async pairing(name, requestedAt = Date.now()) {
      const claims = { key, name, requested_at: requestedAt };
      return { ...claims, proof: await signBytes(pairingBytes(claims)) };
    },
  };
  return device;
}

/** The nonce of the signature a signed snapshot or changes report carries. */
export function nonceOf(data: object): string {
  const source = (data as { source?: { device?: DeviceSignature } }).source;
  if (!source?.device) throw new Error("not signed");
  return source.device.nonce;
}

const SIGNED_HEAD = "c".repeat(40);
const SIGNED_BLOB = "a".repeat(40);

/** A start snapshot `device` signed for `workflowId`: a clean git checkout at a fixed commit. */
export function signedCleanStart(device: TestDevice, workflowId: string) {
  return device.signSnapshot({ type: "git", head: SIGNED_HEAD, branch: "main", dirty: [] }, workflowId);
}

/** The changes `device` signed for a task started with `task.nonce`: one new file, `src/<task id>.ts`, left uncommitted. */
export function signedOneNewFile(device: TestDevice, task: { taskId: string; nonce: string }) {
  const dirty = [{ path: `src/${task.taskId}.ts`, head: null, worktree: { mode: "100644", blob: SIGNED_BLOB } }];
  return device.signChanges(
    { type: "git", start_head: SIGNED_HEAD, head: SIGNED_HEAD, committed: [], dirty },
    null,
    task.taskId,
    task.nonce,
  );
}
