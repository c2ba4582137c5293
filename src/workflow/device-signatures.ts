/**
 * @module workflow/device-signatures
 * The helper's device signature on start_task and complete_task, checked before the write
 * (domain/device-signature): it is taken out of the input, so a retry signed afresh is the same
 * request to idempotency and no signature is stored; the bytes it must cover are computed here
 * from this workflow's own ids (the workflow a task starts in, the task being completed) and the
 * data received; the account object, which holds the devices, gives the verdict. A call whose
 * workflow or task is not this account's gets no verdict: its write is refused anyway.
 */
import { completionData, type DeviceSignature, signatureOf, startData, withoutSignature } from "@waymark/protocol/device-signature";
import type { CompleteTaskInput, StartTaskInput } from "@waymark/protocol/tools";
import { expectedMessage, NOT_SIGNED, type SignatureVerdict } from "../domain/device-signature";

/** The account's side of a verification (AccountObject.verifyDeviceSignature). */
export type VerifyWithAccount = (account: string, signature: DeviceSignature, message: Uint8Array) => Promise<SignatureVerdict>;

export interface Checked<I> {
  /** The input without its signature: what the write records and idempotency compares. */
  input: I;
  verdict: SignatureVerdict;
}

const UNSIGNED: SignatureVerdict = { ok: false, reason: NOT_SIGNED };

export class DeviceSignatures {
  constructor(private readonly verify: VerifyWithAccount) {}

  /** `workflowId`: this object's workflow when it is `account`'s, else null. */
  async start(account: string, workflowId: string | null, input: StartTaskInput): Promise<Checked<StartTaskInput>> {
    const signature = signatureOf(input.snapshot);
    if (!signature) return { input, verdict: UNSIGNED };
    const unsigned = { ...input, snapshot: withoutSignature(input.snapshot) };
    if (workflowId === null || workflowId !== input.workflow_id) return { input: unsigned, verdict: UNSIGNED };
    const message = expectedMessage("start_task", workflowId, signature, startData(input.snapshot));
    return { input: unsigned, verdict: await this.verify(account, signature, message) };
  }

  /** `owned`: whether the task is one of this workflow's, and the workflow `account`'s. */
  async completion(account: string, owned: boolean, input: CompleteTaskInput): Promise<Checked<CompleteTaskInput>> {
    const signature = signatureOf(input.changes);
    if (!signature) return { input, verdict: UNSIGNED };
    const unsigned = { ...input, changes: withoutSignature(input.changes) };
    if (!owned) return { input: unsigned, verdict: UNSIGNED };
    const message = expectedMessage("complete_task", input.task_id, signature, completionData(input.changes, input.metrics));
    return { input: unsigned, verdict: await this.verify(account, signature, message) };
  }
}
