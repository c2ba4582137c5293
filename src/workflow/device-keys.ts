/**
 * @module workflow/device-keys
 * The account's device keys, kept by the workflow object so that the device signatures on
 * start_task and complete_task are verified here, on the write path, without a call to the
 * account object (domain/device-signature gives the verdict, as the account did).
 *
 * The copy is fetched from the account, which subscribes this workflow for as long as the copy is
 * trusted (LIMITS.DEVICE_KEYS_FRESH_MS): every approval and revocation is pushed here in that
 * time (`apply`), before the owner's request answers, so a revoked device's next signature is
 * refused at once. Should a push fail, the next answer of the account to this workflow's outbox
 * push names the newer generation (`noteGeneration`) and the copy is fetched again before the next
 * verification; past its trust the copy is fetched again anyway. A copy never replaces a newer
 * one (`generation`). It is stored (since v27 a column of the totals row, `device_keys`, which every
 * workflow has: a table of its own was two rows of sqlite_schema written for each workflow a paired
 * device signs in), so it outlives the object's eviction; the uses of
 * each device this workflow accepted ride on its next outbox push (the device's "last used").
 */
import { type DeviceSignature, deviceFingerprint } from "@waymark/protocol/device-signature";
import { type DeviceKeySet, type DeviceUse, type SignatureVerdict, verifyDeviceSignature } from "../domain/device-signature";
import { LIMITS } from "../limits";
import type { Sql } from "../storage/sql";

/** The account's side: its keys, this workflow subscribed to their changes (AccountObject.deviceKeys). */
export type FetchDeviceKeys = (account: string) => Promise<DeviceKeySet>;

interface Kept extends DeviceKeySet {
  fresh_until: number;
}

export class DeviceKeyCache {
  /** The stored copy as parsed; undefined: not read yet in this instance. */
  private kept: Kept | null | undefined;
  private readonly uses = new Map<string, number>();

  constructor(
    private readonly sql: Sql,
    private readonly fetchKeys: FetchDeviceKeys,
  ) {}

  /** The verdict on a signature over `message`, from the kept copy (fetched first when there is none or it is no longer trusted). */
  async verdict(account: string, signature: DeviceSignature, message: Uint8Array, now: number): Promise<SignatureVerdict> {
    let keys = this.read();
    if (!keys || keys.fresh_until <= now) keys = await this.refresh(account, now);
    const fingerprint = deviceFingerprint(signature.key);
    const device = keys.devices.find((d) => d.fingerprint === fingerprint) ?? null;
    const verdict = await verifyDeviceSignature(signature, message, device, now);
    if (verdict.ok) this.uses.set(fingerprint, now);
    return verdict;
  }

  /** The account pushed a change of its keys (an approval, a revocation). */
  apply(keys: DeviceKeySet): void {
    const kept = this.read();
    if (kept && kept.generation > keys.generation) return;
    this.store({ ...keys, fresh_until: kept?.fresh_until ?? 0 });
  }

  /** The account's keys are at `generation`: an older copy is no longer trusted (a push of the change did not arrive). */
  noteGeneration(generation: number): void {
    const kept = this.read();
    if (kept && kept.generation < generation && kept.fresh_until > 0) this.store({ ...kept, fresh_until: 0 });
  }

  /** The uses since the last call, for the outbox's push. */
  takeUses(): DeviceUse[] {
    const uses = [...this.uses].map(([fingerprint, at]) => ({ fingerprint, at }));
    this.uses.clear();
    return uses;
  }

  /** A push that carried `uses` failed: the next one carries them (unless a later use replaced one). */
  returnUses(uses: readonly DeviceUse[]): void {
    for (const use of uses) if (!this.uses.has(use.fingerprint)) this.uses.set(use.fingerprint, use.at);
  }

  private async refresh(account: string, now: number): Promise<Kept> {
    const fetched = await this.fetchKeys(account);
    const kept = this.read();
    // A push that arrived meanwhile may be newer than what this fetch read.
    if (kept && kept.generation > fetched.generation) return kept;
    return this.store({ ...fetched, fresh_until: now + LIMITS.DEVICE_KEYS_FRESH_MS });
  }

  private read(): Kept | null {
    if (this.kept === undefined) {
      const stored = this.sql<{ keys: string | null }>`SELECT device_keys AS keys FROM totals WHERE id = 1`[0]?.keys ?? null;
      this.kept = stored === null ? null : (JSON.parse(stored) as Kept);
    }
    return this.kept;
  }

  private store(kept: Kept): Kept {
    const stored: Kept = { generation: kept.generation, devices: kept.devices, fresh_until: kept.fresh_until };
    this.sql`UPDATE totals SET device_keys = ${JSON.stringify(stored)} WHERE id = 1`;
    this.kept = kept;
    return kept;
  }
}
