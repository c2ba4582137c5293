/**
 * The edge's verdict on a device signature (domain/device-signature), with real Ed25519 keys: an
 * approved device's signature over exactly this data and task verifies; everything an attacker
 * can try instead (no signature, an unknown or revoked device, an old signature, data edited
 * after signing, a signature moved to another task, a signature by another key naming the
 * approved one, a forged start nonce, a pairing request for a key it does not hold) is refused
 * with a reason a reviewer can act on.
 */
import { canonicalJson } from "@waymark/protocol/chain";
import {
  completionData,
  deviceFingerprint,
  deviceSignedProblem,
  deviceSignedText,
  signedBytes,
  signedMessage,
} from "@waymark/protocol/device-signature";
import { describe, expect, it } from "vitest";
import { type DeviceKey, pairingProblem, verifyDeviceSignature } from "../../src/domain/device-signature";
import { testDevice } from "../support/device-keys";

const TASK = "wf_0123456789abcdef.t_0123456789";
const OTHER_TASK = "wf_0123456789abcdef.t_9876543210";
const changes = { type: "net", transitions: [{ path: "src/a.ts", before: null, after: { mode: "100644", blob: "a".repeat(40) } }] };
const metrics = { input_tokens: 10, source: "transcript" };

async function setup() {
  const device = await testDevice();
  const approved: DeviceKey = { name: "laptop", fingerprint: deviceFingerprint(device.key), key: device.key, revoked_at: null };
  return { device, approved };
}

/** The edge's verdict on `signature` for completing `task` with `data`. */
async function verdict(
  signature: Awaited<ReturnType<Awaited<ReturnType<typeof testDevice>>["sign"]>>,
  data: unknown,
  device: DeviceKey | null,
  task = TASK,
  now = Date.now(),
) {
  // The bytes the workflow builds from what it received: the protocol's, as the helper signs them.
  const { signature: _value, ...claims } = signature;
  return verifyDeviceSignature(signature, signedBytes("complete_task", task, claims, data), device, now);
}

describe("verifyDeviceSignature", () => {
  it("an approved device's signature over this task and data verifies, naming the device", async () => {
    const { device, approved } = await setup();
    const data = completionData(changes, metrics);
    const signature = await device.sign("complete_task", TASK, data, { startNonce: "s".repeat(22) });
    expect(await verdict(signature, data, approved)).toEqual({
      ok: true,
      device: { name: "laptop", fingerprint: approved.fingerprint },
      nonce: signature.nonce,
      start_nonce: "s".repeat(22),
    });
  });

  it.each<[string, (d: Awaited<ReturnType<typeof setup>>) => Promise<{ reason: RegExp; ok: false } | Awaited<ReturnType<typeof verdict>>>]>(
    [
      [
        "a device the account never approved",
        async ({ device }) =>
          verdict(await device.sign("complete_task", TASK, completionData(changes, metrics)), completionData(changes, metrics), null),
      ],
      [
        "a revoked device",
        async ({ device, approved }) =>
          verdict(await device.sign("complete_task", TASK, completionData(changes, metrics)), completionData(changes, metrics), {
            ...approved,
            revoked_at: "2026-11-27T10:00:00.000Z",
          }),
      ],
      [
        "a signature older than the edge accepts",
        async ({ device, approved }) =>
          verdict(
            await device.sign("complete_task", TASK, completionData(changes, metrics), { signedAt: Date.now() - 11 * 60_000 }),
            completionData(changes, metrics),
            approved,
          ),
      ],
      [
        "data edited after signing (a file added to the list)",
        async ({ device, approved }) => {
          const signature = await device.sign("complete_task", TASK, completionData(changes, metrics));
          const edited = { ...changes, transitions: [...changes.transitions, { path: "evil.ts", before: null, after: null }] };
          return verdict(signature, completionData(edited, metrics), approved);
        },
      ],
      [
        "usage edited after signing",
        async ({ device, approved }) => {
          const signature = await device.sign("complete_task", TASK, completionData(changes, metrics));
          return verdict(signature, completionData(changes, { ...metrics, input_tokens: 1 }), approved);
        },
      ],
      [
        "a signature replayed onto another task",
        async ({ device, approved }) => {
          const signature = await device.sign("complete_task", TASK, completionData(changes, metrics));
          return verdict(signature, completionData(changes, metrics), approved, OTHER_TASK);
        },
      ],
      [
        "a start signature replayed as a completion",
        async ({ device, approved }) => {
          const signature = await device.sign("start_task", TASK, completionData(changes, metrics));
          return verdict(signature, completionData(changes, metrics), approved);
        },
      ],
      [
        "another key's signature naming the approved key",
        async ({ approved }) => {
          const attacker = await testDevice();
          const signature = await attacker.sign("complete_task", TASK, completionData(changes, metrics), { key: approved.key });
          return verdict(signature, completionData(changes, metrics), approved);
        },
      ],
      [
        "a start nonce swapped after signing",
        async ({ device, approved }) => {
          const signature = await device.sign("complete_task", TASK, completionData(changes, metrics), { startNonce: "a".repeat(22) });
          return verdict({ ...signature, start_nonce: "b".repeat(22) }, completionData(changes, metrics), approved);
        },
      ],
    ],
  )("refuses %s", async (_label, attempt) => {
    const result = await attempt(await setup());
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.reason).toMatch(/not approved|revoked|minutes from the edge's clock|does not verify/);
  });

  it("names the reason plainly", async () => {
    const { device, approved } = await setup();
    const data = completionData(changes, metrics);
    const signature = await device.sign("complete_task", TASK, data);
    expect(await verdict(signature, data, null)).toEqual({
      ok: false,
      reason: `signed by device ${approved.fingerprint}, which this account has not approved`,
    });
    const revoked = await verdict(signature, data, { ...approved, revoked_at: "2026-11-27T10:00:00.000Z" });
    expect(revoked).toEqual({ ok: false, reason: expect.stringContaining("revoked 2026-11-27T10:00:00.000Z") });
    expect(await verdict(signature, data, approved, OTHER_TASK)).toEqual({
      ok: false,
      reason: "its device signature does not verify for this task and data",
    });
  });
});

describe("pairingProblem", () => {
  it("takes a recent request signed by the key it names; refuses an old one and one for a key it does not hold", async () => {
    const device = await testDevice();
    expect(await pairingProblem(await device.pairing("laptop"), Date.now())).toBeNull();
    expect(await pairingProblem(await device.pairing("laptop", Date.now() - 60 * 60_000), Date.now())).toMatch(/^requested_at: /);
    const other = await testDevice();
    const stolen = { ...(await other.pairing("laptop")), key: device.key };
    expect(await pairingProblem(stolen, Date.now())).toBe("proof: must be the device key's signature over the request");
    const renamed = { ...(await device.pairing("laptop")), name: "someone else's" };
    expect(await pairingProblem(renamed, Date.now())).toMatch(/^proof: /);
  });
});

describe("a payload kept whole (DeviceSigned)", () => {
  it("is its canonical JSON, and stands on its own: it verifies with its key alone, and fails once anything in it changes", async () => {
    const { device } = await setup();
    const data = completionData(changes, metrics);
    const signature = await device.sign("complete_task", TASK, data, { startNonce: "s".repeat(22) });
    const { signature: value, ...claims } = signature;
    const message = signedMessage("complete_task", TASK, claims, data);
    const where = { workflow_id: "wf_0123456789abcdef", task_id: TASK };
    const text = deviceSignedText(where, message, canonicalJson(data), value);
    const kept = {
      type: "waymark.device-signed" as const,
      ...where,
      fingerprint: deviceFingerprint(device.key),
      message,
      data,
      signature: value,
    };
    expect(text).toBe(canonicalJson(kept));
    const parsed = JSON.parse(text) as typeof kept;
    expect(await deviceSignedProblem(parsed)).toBeNull();
    expect(await deviceSignedProblem({ ...parsed, data: completionData(changes, { ...metrics, input_tokens: 11 }) })).toBe(
      "data: not what the device signed (its digest differs from message.digest)",
    );
    expect(await deviceSignedProblem({ ...parsed, message: { ...parsed.message, subject: OTHER_TASK } })).toBe(
      `signature: does not verify under device key ${deviceFingerprint(device.key)}`,
    );
    expect(await deviceSignedProblem({ ...parsed, fingerprint: deviceFingerprint("Q".repeat(43)) })).toMatch(
      /is not the fingerprint of message.key/,
    );
  });
});
