/**
 * @module allowed-signers
 * The device keys a repository trusts, pinned outside the server: the file `waymark verify`
 * checks every device-signed payload of an export against (by default `.waymark/allowed-signers`
 * in the repository, committed with the code; or one given with `--allowed-signers`), in the
 * spirit of git's gpg.ssh.allowedSignersFile. One key per line:
 *
 *   <principal> [options] waymark-ed25519 <public key> [comment]
 *
 * `principal` names whoever holds the key (no spaces); `options`, comma-separated, are
 * `valid-after="<time>"` and `valid-before="<time>"`, the period the key's signatures count in,
 * in ssh's form YYYYMMDD[HHMM[SS]]Z (the Z is required: UTC; ssh reads a time without it as local
 * time, which a file shared between machines cannot mean); the key is the device's Ed25519 public
 * key, 32 bytes base64url (what `waymark device` prints, with the whole line to add). Blank lines
 * and lines starting with `#` are ignored. A key may appear on several lines (several periods);
 * a signature counts when one of them covers its time. To disown a device from a date on (it was
 * lost, or its key leaked), set valid-before; to disown it altogether, remove its lines.
 */
import { DEVICE_KEY_PATTERN, deviceFingerprint } from "./device-signature";

export const ALLOWED_SIGNERS_PATH = ".waymark/allowed-signers";
export const ALLOWED_SIGNER_KEY_TYPE = "waymark-ed25519";
/** Lines a file may hold (a repository pins its team's devices, not thousands). */
const MAX_LINES = 10_000;

export interface AllowedSigner {
  principal: string;
  key: string;
  fingerprint: string;
  /** Epoch ms; null: no bound. */
  valid_after: number | null;
  valid_before: number | null;
  /** 1-based line of the file, for messages. */
  line: number;
}

export class AllowedSignersError extends Error {
  override name = "AllowedSignersError";
}

const TIME = /^(\d{4})(\d{2})(\d{2})(?:(\d{2})(\d{2})(?:(\d{2}))?)?Z$/;

function time(value: string, option: string, line: number): number {
  const match = TIME.exec(value);
  const [, y, mo, d, h = "00", mi = "00", s = "00"] = match ?? [];
  const at = match ? Date.UTC(Number(y), Number(mo) - 1, Number(d), Number(h), Number(mi), Number(s)) : Number.NaN;
  // A date that rolls over (Feb 30, hour 25) is not the date written.
  if (Number.isNaN(at) || !new Date(at).toISOString().startsWith(`${y}-${mo}-${d}T${h}:${mi}:${s}`)) {
    throw new AllowedSignersError(
      `line ${line}: ${option}="${value}" must be a UTC time YYYYMMDD[HHMM[SS]]Z (the Z is required: without it ssh reads local time)`,
    );
  }
  return at;
}

function options(text: string, line: number): Pick<AllowedSigner, "valid_after" | "valid_before"> {
  const found: Pick<AllowedSigner, "valid_after" | "valid_before"> = { valid_after: null, valid_before: null };
  for (const option of text.split(",")) {
    const match = /^(valid-after|valid-before)="([^"]*)"$/.exec(option);
    if (!match) {
      throw new AllowedSignersError(
        `line ${line}: unknown option ${JSON.stringify(option)} (valid-after="…" and valid-before="…" are read)`,
      );
    }
    const [, name = "", value = ""] = match;
    found[name === "valid-after" ? "valid_after" : "valid_before"] = time(value, name, line);
  }
  if (found.valid_after !== null && found.valid_before !== null && found.valid_after >= found.valid_before) {
    throw new AllowedSignersError(`line ${line}: valid-after must come before valid-before`);
  }
  return found;
}

/** The signers a file lists; an AllowedSignersError names the line and the rule it breaks. */
export function parseAllowedSigners(text: string): AllowedSigner[] {
  const lines = text.split(/\r?\n/);
  if (lines.length > MAX_LINES) throw new AllowedSignersError(`at most ${MAX_LINES} lines`);
  const signers: AllowedSigner[] = [];
  for (const [index, raw] of lines.entries()) {
    const line = index + 1;
    const text = raw.trim();
    if (text === "" || text.startsWith("#")) continue;
    const fields = text.split(/[ \t]+/);
    const [principal = "", second = ""] = fields;
    const hasOptions = second !== ALLOWED_SIGNER_KEY_TYPE;
    const [type, key] = hasOptions ? [fields[2], fields[3]] : [fields[1], fields[2]];
    if (type !== ALLOWED_SIGNER_KEY_TYPE || key === undefined) {
      throw new AllowedSignersError(
        `line ${line}: must be <principal> [options] ${ALLOWED_SIGNER_KEY_TYPE} <public key> [comment] (waymark device prints the line to add)`,
      );
    }
    if (!DEVICE_KEY_PATTERN.test(key)) {
      throw new AllowedSignersError(
        `line ${line}: the key must be a 32-byte Ed25519 public key, base64url without padding (43 characters)`,
      );
    }
    signers.push({ principal, key, fingerprint: deviceFingerprint(key), ...(hasOptions ? options(second, line) : NO_BOUNDS), line });
  }
  return signers;
}

const NO_BOUNDS = { valid_after: null, valid_before: null } as const;

/** `2026-11-27T13:26:02.564Z` → `20261127132602Z`: a time as the file writes it. */
function fileTime(at: number): string {
  return `${new Date(at).toISOString().replace(/[-:]/g, "").slice(0, 15).replace("T", "")}Z`;
}

/** The line that pins a device key under `name` (spaces become dashes: a principal is one word). */
export function allowedSignerLine(name: string, key: string): string {
  const principal = name.trim().replace(/\s+/g, "-") || "device";
  return `${principal} ${ALLOWED_SIGNER_KEY_TYPE} ${key} ${deviceFingerprint(key)}`;
}

export type SignerVerdict = { ok: true; signer: AllowedSigner } | { ok: false; problem: string };

/** Whether `key` may sign at `at` (epoch ms) under these signers, and as whom. */
export function allowedSigner(signers: readonly AllowedSigner[], key: string, at: number): SignerVerdict {
  const lines = signers.filter((signer) => signer.key === key);
  if (lines.length === 0) return { ok: false, problem: `device key ${deviceFingerprint(key)} is not in the allowed signers` };
  const covering = lines.find(
    (signer) => (signer.valid_after === null || at >= signer.valid_after) && (signer.valid_before === null || at < signer.valid_before),
  );
  if (covering) return { ok: true, signer: covering };
  const periods = lines.map(
    (signer) =>
      `line ${signer.line}: ${signer.valid_after === null ? "…" : fileTime(signer.valid_after)} to ${signer.valid_before === null ? "…" : fileTime(signer.valid_before)}`,
  );
  return {
    ok: false,
    problem: `device key ${deviceFingerprint(key)} (${lines[0]?.principal}) signed at ${new Date(at).toISOString()}, outside its allowed period (${periods.join("; ")})`,
  };
}
