/**
 * @module device-key
 * This machine's device key: the Ed25519 key pair the helper signs what it computes with, so the
 * edge can record it as computed and signed rather than claimed (@waymark/protocol/device-signature).
 * Created on first use (`waymark init`, `waymark device`, the first `waymark mcp`) in the user's
 * config directory ($XDG_CONFIG_HOME/waymark/device-key.json, else ~/.config/waymark/…), mode 0600
 * in a 0700 folder, never in a repository; a key file other users could read is not used (as ssh
 * refuses such a key). Only the public half leaves the machine, when the owner pairs the device.
 *
 * What it does not stop: anything running as the same user on this machine (an agent's shell
 * commands included) can read the key and sign; docs/provenance.md states the threat model.
 */
import { createPrivateKey, generateKeyPairSync, type KeyObject, randomBytes, sign } from "node:crypto";
import { linkSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from "node:fs";
import { mkdir } from "node:fs/promises";
import { hostname } from "node:os";
import { dirname, isAbsolute, join, relative } from "node:path";
import {
  bytesToBase64Url,
  type DeviceSignature,
  deviceFingerprint,
  type PairingRequest,
  pairingBytes,
  type SignedTool,
  signedBytes,
} from "@waymark/protocol/device-signature";
import { userConfigPath } from "./endpoint.js";

type KeyFile = { version: 1; name: string; created_at: string; key: { kty: "OKP"; crv: "Ed25519"; x: string; d: string } };

/** A key file that cannot be used; the message says why and what to do. */
export class DeviceKeyError extends Error {}

export function deviceKeyPath(env: NodeJS.ProcessEnv = process.env): string {
  return join(dirname(userConfigPath(env)), "device-key.json");
}

function inside(path: string, dir: string): boolean {
  const rel = relative(dir, path);
  return rel === "" || (!rel.startsWith("..") && !isAbsolute(rel));
}

export class DeviceKey {
  private constructor(
    readonly path: string,
    readonly name: string,
    /** The Ed25519 public key, 32 bytes base64url. */
    readonly publicKey: string,
    private readonly privateKey: KeyObject,
  ) {}

  get fingerprint(): string {
    return deviceFingerprint(this.publicKey);
  }

  /** The key in the user's config directory, or null when there is none yet. */
  static load(env: NodeJS.ProcessEnv = process.env): DeviceKey | null {
    const path = deviceKeyPath(env);
    let text: string;
    try {
      const mode = statSync(path).mode;
      if ((mode & 0o077) !== 0) {
        throw new DeviceKeyError(`${path} can be read by other users (mode ${(mode & 0o777).toString(8)}); run chmod 600 ${path}`);
      }
      text = readFileSync(path, "utf8");
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "ENOENT") return null;
      throw error;
    }
    try {
      const file = JSON.parse(text) as KeyFile;
      const privateKey = createPrivateKey({ key: file.key, format: "jwk" });
      return new DeviceKey(path, file.name, file.key.x, privateKey);
    } catch {
      throw new DeviceKeyError(`${path} is not a Waymark device key; move it away and run waymark device pair --new-key`);
    }
  }

  /**
   * The key, created when there is none (named after this machine unless `name` says otherwise).
   * `project`: the repository the helper works in; a key is never created inside it.
   */
  static async ensure(
    options: { env?: NodeJS.ProcessEnv; name?: string; project?: string } = {},
  ): Promise<{ key: DeviceKey; created: boolean }> {
    const env = options.env ?? process.env;
    const known = DeviceKey.load(env);
    if (known) return { key: known, created: false };
    const path = deviceKeyPath(env);
    if (options.project && inside(path, options.project)) {
      throw new DeviceKeyError(
        `${path} is inside the project ${options.project}: a device key never goes into a repository; set XDG_CONFIG_HOME elsewhere`,
      );
    }
    await mkdir(dirname(path), { recursive: true, mode: 0o700 });
    const { privateKey } = generateKeyPairSync("ed25519");
    const jwk = privateKey.export({ format: "jwk" });
    const file: KeyFile = {
      version: 1,
      name: (options.name ?? hostname()).trim() || "this machine",
      created_at: new Date().toISOString(),
      key: { kty: "OKP", crv: "Ed25519", x: String(jwk.x), d: String(jwk.d) },
    };
    // Written aside, then linked into place: two helpers starting at once keep one key, never half of one.
    const temp = `${path}.${process.pid}.${randomBytes(6).toString("hex")}.tmp`;
    writeFileSync(temp, `${JSON.stringify(file, null, 2)}\n`, { mode: 0o600 });
    try {
      linkSync(temp, path);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
    } finally {
      rmSync(temp, { force: true });
    }
    const key = DeviceKey.load(env);
    if (!key) throw new DeviceKeyError(`${path} could not be written`);
    return { key, created: key.publicKey === file.key.x };
  }

  /**
   * The same key under another name (what `waymark device --name` and pairing show and send): the
   * file is rewritten aside and renamed into place, so a reader sees the old name or the new one.
   */
  rename(name: string, env: NodeJS.ProcessEnv = process.env): DeviceKey {
    const wanted = name.trim();
    if (wanted === "" || wanted === this.name) return this;
    const file = JSON.parse(readFileSync(this.path, "utf8")) as KeyFile;
    if (file.key.x !== this.publicKey) throw new DeviceKeyError(`${this.path} changed while it was being renamed; run the command again`);
    const temp = `${this.path}.${process.pid}.${randomBytes(6).toString("hex")}.tmp`;
    try {
      writeFileSync(temp, `${JSON.stringify({ ...file, name: wanted }, null, 2)}\n`, { mode: 0o600 });
      renameSync(temp, this.path);
    } finally {
      rmSync(temp, { force: true });
    }
    const renamed = DeviceKey.load(env);
    if (!renamed) throw new DeviceKeyError(`${this.path} could not be written`);
    return renamed;
  }

  /** Moves the current key aside (device-key.json.<time>.old) so the next ensure() makes a new one. */
  static retire(env: NodeJS.ProcessEnv = process.env): string | null {
    const path = deviceKeyPath(env);
    const aside = `${path}.${Date.now()}.old`;
    try {
      linkSync(path, aside);
      rmSync(path);
      return aside;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "ENOENT") return null;
      throw error;
    }
  }

  private signBytes(bytes: Uint8Array): string {
    return bytesToBase64Url(sign(null, bytes, this.privateKey));
  }

  /** The signature over `data` for `tool` on `subject` (the workflow a task starts in, the task it completes). */
  signature(tool: SignedTool, subject: string, data: unknown, startNonce?: string): DeviceSignature {
    const claims = {
      key: this.publicKey,
      signed_at: Date.now(),
      nonce: bytesToBase64Url(randomBytes(16)),
      ...(startNonce ? { start_nonce: startNonce } : {}),
    };
    return { ...claims, signature: this.signBytes(signedBytes(tool, subject, claims, data)) };
  }

  /** A pairing request for this key, with the proof that the helper holds it. */
  pairingRequest(name: string = this.name): PairingRequest {
    const claims = { key: this.publicKey, name, requested_at: Date.now() };
    return { ...claims, proof: this.signBytes(pairingBytes(claims)) };
  }
}
