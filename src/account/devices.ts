/**
 * @module account/devices
 * The devices whose helpers sign for one account (docs/provenance.md, "Devices"), kept in its
 * AccountObject's SQLite, like SSH keys on a code host: a device is the public half of an Ed25519
 * key (the private half never leaves the machine), a name the owner gave it, its fingerprint, when
 * it was approved and last used, and whether it was revoked. A device gets here two ways, both an
 * admin's decision: a pairing code the helper printed (`waymark device pair` sent its public key
 * and got the code; the owner enters the code in the dashboard, checks the name and fingerprint,
 * and approves), or an admin adding the public key through the API. Pairing codes are kept only as
 * hashes, live ten minutes and work once. A revoked key never comes back: signatures it makes stop
 * counting at once, and approving it again is refused (the device makes a new key). Workflow
 * objects verify signatures with a copy of the keys (`keySet`, pushed to them on every change)
 * and report the uses they accepted back (`touchUsed`).
 */
import { deviceFingerprint } from "@waymark/protocol/device-signature";
import { randomBase32, sha256Hex } from "../crypto";
import type { CredentialRef } from "../domain/credentials";
import type { DeviceKeySet, DeviceUse } from "../domain/device-signature";
import { TOUCH_INTERVAL_MS } from "../domain/managed-token";
import { fail, notFound, ok, type Result } from "../errors";
import { isoTime } from "../iso-time";
import { LIMITS } from "../limits";
import type { Sql } from "../storage/sql";

const ID_LENGTH = 12;
const DEVICE_ID = new RegExp(`^[a-z2-7]{${ID_LENGTH}}$`);
/** Pairing codes: no 0/O or 1/I to misread; 8 characters (40 bits) shown as XXXX-XXXX. */
const CODE_ALPHABET = "ABCDEFGHJKLMNPQRSTUVWXYZ23456789";
const CODE_LENGTH = 8;

export interface DeviceInfo {
  id: string;
  name: string;
  fingerprint: string;
  /** The Ed25519 public key, 32 bytes base64url. */
  key: string;
  created_at: string;
  last_used_at: string | null;
  revoked_at: string | null;
}

/** A pairing request waiting for the owner, as the dashboard shows it before approval. */
export interface PendingDevice {
  name: string;
  fingerprint: string;
  requested_at: string;
  expires_at: string;
}

/** A pairing request as the Devices page lists it: who asked (the credential), never its code. */
export interface PairingRequest extends PendingDevice {
  /** The credential that asked (src/domain/credentials.ts), null for requests made before this was recorded. */
  credential: CredentialRef | null;
}

export interface IssuedPairing {
  code: string;
  fingerprint: string;
  expires_at: string;
}

type Row = Record<string, SqlStorageValue>;
const text = (value: SqlStorageValue | undefined) => (value === null || value === undefined ? null : String(value));

function infoFromRow(row: Row): DeviceInfo {
  return {
    id: String(row.id),
    name: String(row.name),
    fingerprint: String(row.fingerprint),
    key: String(row.public_key),
    created_at: String(row.created_at),
    last_used_at: text(row.last_used_at),
    revoked_at: text(row.revoked_at),
  };
}

/** A code as typed: case, spaces and dashes do not matter. */
export function normalizePairingCode(code: string): string {
  return code.toUpperCase().replace(/[\s-]/g, "");
}

function newCode(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(CODE_LENGTH));
  const code = Array.from(bytes, (b) => CODE_ALPHABET[b % CODE_ALPHABET.length]).join("");
  return `${code.slice(0, 4)}-${code.slice(4)}`;
}

const codeHash = (code: string) => sha256Hex(`waymark-device-pairing\n${normalizePairingCode(code)}`);

export class Devices {
  constructor(private readonly sql: Sql) {}

  /** Why this key cannot be paired or added, or null. */
  private keyProblem(key: string): string | null {
    const row = this.sql<Row>`SELECT * FROM devices WHERE public_key = ${key}`[0];
    if (!row) return null;
    const known = infoFromRow(row);
    return known.revoked_at
      ? `key: this device key was revoked at ${known.revoked_at} and is never approved again; make a new one on the device (waymark device pair --new-key)`
      : `key: this device is already approved for the account, as “${known.name}”`;
  }

  /**
   * A pairing code for a device that proved it holds `key` (the route checked the proof), asked
   * with `credential`. Requests wait per credential (one token filling its share leaves every other
   * credential's untouched) and per account (a storage bound; the owner can clear them all).
   */
  async requestPairing(input: { key: string; name: string; credential: CredentialRef }, now = Date.now()): Promise<Result<IssuedPairing>> {
    const problem = this.keyProblem(input.key);
    if (problem) return fail("CONFLICT", problem);
    this.sql`DELETE FROM device_pairings WHERE expires_at <= ${now}`;
    const minutes = LIMITS.DEVICE_PAIRING_TTL_MS / 60_000;
    const mine = this.sql<{ n: number }>`SELECT count(*) AS n FROM device_pairings WHERE credential = ${input.credential}`[0]?.n ?? 0;
    if (mine >= LIMITS.DEVICE_PAIRINGS_PER_CREDENTIAL) {
      return fail(
        "QUOTA_EXCEEDED",
        `pairing: at most ${LIMITS.DEVICE_PAIRINGS_PER_CREDENTIAL} pairing requests of one token wait at once; approve one, clear them on the Devices page, or wait ${minutes} minutes`,
      );
    }
    const pending = this.sql<{ n: number }>`SELECT count(*) AS n FROM device_pairings`[0]?.n ?? 0;
    if (pending >= LIMITS.DEVICE_PAIRINGS) {
      return fail(
        "QUOTA_EXCEEDED",
        `pairing: at most ${LIMITS.DEVICE_PAIRINGS} pairing requests wait at once; the owner can clear them on the Devices page, or wait ${minutes} minutes`,
      );
    }
    const code = newCode();
    const expiresAt = now + LIMITS.DEVICE_PAIRING_TTL_MS;
    this.sql`INSERT INTO device_pairings (code_hash, public_key, name, requested_at, expires_at, credential)
      VALUES (${await codeHash(code)}, ${input.key}, ${input.name}, ${isoTime(now)}, ${expiresAt}, ${input.credential})`;
    return ok({ code, fingerprint: deviceFingerprint(input.key), expires_at: isoTime(expiresAt) });
  }

  /** The requests waiting, oldest first: what the Devices page lists (and the owner may clear). */
  pairingRequests(now = Date.now()): PairingRequest[] {
    return this.sql<Row>`SELECT * FROM device_pairings WHERE expires_at > ${now} ORDER BY requested_at`.map((row) => ({
      name: String(row.name),
      fingerprint: deviceFingerprint(String(row.public_key)),
      requested_at: String(row.requested_at),
      expires_at: isoTime(Number(row.expires_at)),
      credential: text(row.credential),
    }));
  }

  /** Clears every waiting request (the owner's action on the Devices page): their codes stop working. Returns how many. */
  clearPairings(): number {
    const count = this.sql<{ n: number }>`SELECT count(*) AS n FROM device_pairings`[0]?.n ?? 0;
    this.sql`DELETE FROM device_pairings`;
    return count;
  }

  /** A credential was revoked: the requests it made go with it. */
  forgetPairingsOf(credential: CredentialRef): void {
    this.sql`DELETE FROM device_pairings WHERE credential = ${credential}`;
  }

  private async pendingRow(code: string, now: number): Promise<Row | null> {
    const row = this.sql<Row>`SELECT * FROM device_pairings WHERE code_hash = ${await codeHash(code)} AND expires_at > ${now}`[0];
    return row ?? null;
  }

  /** The device a code stands for, shown to the owner before approval. */
  async pending(code: string, now = Date.now()): Promise<Result<PendingDevice>> {
    const row = await this.pendingRow(code, now);
    if (!row) return pairingNotFound();
    return ok({
      name: String(row.name),
      fingerprint: deviceFingerprint(String(row.public_key)),
      requested_at: String(row.requested_at),
      expires_at: isoTime(Number(row.expires_at)),
    });
  }

  /** Approves the device a code stands for, under the name the owner chose; the code is spent. */
  async approve(code: string, name: string, now = Date.now()): Promise<Result<DeviceInfo>> {
    const row = await this.pendingRow(code, now);
    if (!row) return pairingNotFound();
    const added = this.add(name, String(row.public_key), now);
    if (added.ok) this.sql`DELETE FROM device_pairings WHERE code_hash = ${String(row.code_hash)}`;
    return added;
  }

  /** Adds a device by its public key (an admin's API call, or an approved pairing). */
  add(name: string, key: string, now = Date.now()): Result<DeviceInfo> {
    const problem = this.keyProblem(key);
    if (problem) return fail("CONFLICT", problem);
    const active = this.sql<{ n: number }>`SELECT count(*) AS n FROM devices WHERE revoked_at IS NULL`[0]?.n ?? 0;
    if (active >= LIMITS.DEVICES) {
      return fail(
        "QUOTA_EXCEEDED",
        `devices: at most ${LIMITS.DEVICES} approved per account (this account has ${active}); revoke one first`,
      );
    }
    const id = randomBase32(ID_LENGTH);
    this.sql`INSERT INTO devices (id, name, public_key, fingerprint, created_at)
      VALUES (${id}, ${name}, ${key}, ${deviceFingerprint(key)}, ${isoTime(now)})`;
    return ok({ id, name, key, fingerprint: deviceFingerprint(key), created_at: isoTime(now), last_used_at: null, revoked_at: null });
  }

  /** Approved devices first (newest first), then revoked ones. */
  list(): DeviceInfo[] {
    return this.sql<Row>`SELECT * FROM devices ORDER BY revoked_at IS NOT NULL, created_at DESC`.map(infoFromRow);
  }

  revoke(id: string, now = Date.now()): Result<DeviceInfo> {
    if (!DEVICE_ID.test(id)) return notFound("id", `device ${id.slice(0, 40)}`);
    this.sql`UPDATE devices SET revoked_at = ${isoTime(now)} WHERE id = ${id} AND revoked_at IS NULL`;
    const row = this.sql<Row>`SELECT * FROM devices WHERE id = ${id}`[0];
    return row ? ok(infoFromRow(row)) : notFound("id", `device ${id}`);
  }

  /**
   * The keys workflow objects verify signatures with (workflow/device-keys): the newest devices,
   * approved and revoked (a revoked one's signature is refused with when it was revoked), and the
   * generation, which every approval and revocation raises (rows are never deleted, a revocation never undone).
   */
  keySet(): DeviceKeySet {
    const generation = this.generation();
    const rows = this.sql<Row>`SELECT * FROM devices ORDER BY created_at DESC LIMIT ${LIMITS.DEVICE_KEYS_KEPT}`;
    return {
      generation,
      devices: rows.map((row) => ({
        name: String(row.name),
        fingerprint: String(row.fingerprint),
        key: String(row.public_key),
        revoked_at: text(row.revoked_at),
      })),
    };
  }

  /** Raised by every approval and revocation. */
  generation(): number {
    return this.sql<{ n: number }>`SELECT count(*) + count(revoked_at) AS n FROM devices`[0]?.n ?? 0;
  }

  /** Signatures workflows accepted, by device fingerprint: each device's last use, recorded at most once a minute. */
  touchUsed(uses: readonly DeviceUse[]): void {
    for (const use of uses) {
      const at = isoTime(use.at);
      const cutoff = isoTime(use.at - TOUCH_INTERVAL_MS);
      this.sql`UPDATE devices SET last_used_at = ${at}
        WHERE fingerprint = ${use.fingerprint} AND revoked_at IS NULL AND (last_used_at IS NULL OR last_used_at < ${cutoff})`;
    }
  }
}

function pairingNotFound<T>(): Result<T> {
  return fail(
    "NOT_FOUND",
    `code: no pairing request has this code, or it expired (codes last ${LIMITS.DEVICE_PAIRING_TTL_MS / 60_000} minutes); run waymark device pair again`,
  );
}
