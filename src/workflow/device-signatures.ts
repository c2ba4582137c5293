/**
 * @module workflow/device-signatures
 * The helper's device signature on start_task and complete_task, checked before the write
 * (domain/device-signature): it is taken out of the input, so a retry signed afresh is the same
 * request to idempotency; the message it must cover is built here (@waymark/protocol/device-signature)
 * from this workflow's own ids (the workflow a task starts in, the task being completed) and the
 * data received; the verdict comes from the account's device keys as this workflow keeps them
 * (./device-keys: no call to the account on the write path). A signature accepted comes back with
 * what it signed (`signed`), which the write keeps whole
 * (packages/protocol/src/device-evidence.ts) so that `waymark verify` can check it again from the export. A call whose
 * workflow or task is not this account's gets no verdict: its write is refused anyway.
 */
import { canonicalJson } from "@waymark/protocol/chain";
import {
  completionData,
  type DeviceSignature,
  messageBytes,
  type SignedMessage,
  type SignedTool,
  signatureOf,
  signedMessage,
  startData,
  withoutSignature,
} from "@waymark/protocol/device-signature";
import type { CompleteTaskInput, StartTaskInput } from "@waymark/protocol/tools";
import { NOT_SIGNED, type SignatureVerdict } from "../domain/device-signature";

/** The verdict on a signature over a message, for `account`'s devices (./device-keys). */
export type VerifySignature = (account: string, signature: DeviceSignature, message: Uint8Array) => Promise<SignatureVerdict>;

/** A payload an approved device signed, as verified: kept whole with the task. */
export interface AcceptedPayload {
  message: SignedMessage;
  /** The data's canonical JSON, as its digest was computed. */
  dataText: string;
  signature: string;
}

export interface Checked<I> {
  /** The input without its signature: what the write records and idempotency compares. */
  input: I;
  verdict: SignatureVerdict;
  /** Present when the verdict is ok. */
  signed?: AcceptedPayload;
}

const UNSIGNED: SignatureVerdict = { ok: false, reason: NOT_SIGNED };

export class DeviceSignatures {
  constructor(private readonly verify: VerifySignature) {}

  /** `workflowId`: this object's workflow when it is `account`'s, else null. */
  async start(account: string, workflowId: string | null, input: StartTaskInput): Promise<Checked<StartTaskInput>> {
    const signature = signatureOf(input.snapshot);
    if (!signature) return { input, verdict: UNSIGNED };
    const unsigned = { ...input, snapshot: withoutSignature(input.snapshot) };
    if (workflowId === null || workflowId !== input.workflow_id) return { input: unsigned, verdict: UNSIGNED };
    return { input: unsigned, ...(await this.check(account, "start_task", workflowId, signature, startData(input.snapshot))) };
  }

  /** `owned`: whether the task is one of this workflow's, and the workflow `account`'s. */
  async completion(account: string, owned: boolean, input: CompleteTaskInput): Promise<Checked<CompleteTaskInput>> {
    const signature = signatureOf(input.changes);
    if (!signature) return { input, verdict: UNSIGNED };
    const unsigned = { ...input, changes: withoutSignature(input.changes) };
    if (!owned) return { input: unsigned, verdict: UNSIGNED };
    const data = completionData(input.changes, input.metrics);
    return { input: unsigned, ...(await this.check(account, "complete_task", input.task_id, signature, data)) };
  }

  private async check(
    account: string,
    tool: SignedTool,
    subject: string,
    signature: DeviceSignature,
    data: unknown,
  ): Promise<{ verdict: SignatureVerdict; signed?: AcceptedPayload }> {
    const { signature: value, ...claims } = signature;
    const dataText = canonicalJson(data);
    const message = signedMessage(tool, subject, claims, data, dataText);
    const verdict = await this.verify(account, signature, messageBytes(message));
    return verdict.ok ? { verdict, signed: { message, dataText, signature: value } } : { verdict };
  }
}
