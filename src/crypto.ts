/**
 * @module crypto
 * The Worker's hashing and signing helpers, in one place: SHA-256, HMAC-SHA-256, the
 * lower-case RFC 4648 base32 alphabet that ids and share tokens use, and a constant-time
 * comparison. Everything runs on WebCrypto, in the Worker and in the Durable Objects alike.
 */
const encoder = new TextEncoder();

/** Lower-case base32 (RFC 4648 letters): safe in URLs, paths and case-insensitive places. */
export const BASE32_ALPHABET = "abcdefghijklmnopqrstuvwxyz234567";

export async function sha256(value: string): Promise<Uint8Array> {
  return new Uint8Array(await crypto.subtle.digest("SHA-256", encoder.encode(value)));
}

export async function sha256Hex(value: string): Promise<string> {
  return hex(await sha256(value));
}

/** Imported keys are cached per secret: signing is on the path of every share link and session check. */
const keys = new Map<string, Promise<CryptoKey>>();

function hmacKey(secret: string): Promise<CryptoKey> {
  let key = keys.get(secret);
  if (!key) {
    key = crypto.subtle.importKey("raw", encoder.encode(secret), { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
    // A handful of secrets exist per deployment; the bound keeps a misconfigured loop from growing it.
    if (keys.size > 16) keys.clear();
    keys.set(secret, key);
  }
  return key;
}

/** HMAC-SHA-256 of a message: text (as UTF-8) or bytes as received (a webhook's raw body). */
export async function hmacSha256(secret: string, message: string | Uint8Array): Promise<Uint8Array> {
  const bytes = typeof message === "string" ? encoder.encode(message) : message;
  return new Uint8Array(await crypto.subtle.sign("HMAC", await hmacKey(secret), bytes));
}

const HEX_PAIRS = Array.from({ length: 256 }, (_, b) => b.toString(16).padStart(2, "0"));

/** Every request hashes its bearer token: a table lookup per byte instead of formatting each one. */
export function hex(bytes: Uint8Array): string {
  let out = "";
  for (const b of bytes) out += HEX_PAIRS[b];
  return out;
}

export function base64Url(bytes: Uint8Array): string {
  return btoa(String.fromCharCode(...bytes))
    .replace(/\+/g, "-")
    .replace(/\//g, "_")
    .replace(/=+$/, "");
}

/** The first `length` base32 characters of `bytes` (5 bits each, most significant first). */
export function base32(bytes: Uint8Array, length: number): string {
  if (length * 5 > bytes.length * 8) throw new RangeError(`base32: ${bytes.length} bytes cannot give ${length} characters`);
  let out = "";
  let buffer = 0;
  let bits = 0;
  let index = 0;
  while (out.length < length) {
    if (bits < 5) {
      buffer = ((buffer << 8) | (bytes[index++] ?? 0)) & 0xffff;
      bits += 8;
    }
    out += BASE32_ALPHABET[(buffer >> (bits - 5)) & 31];
    bits -= 5;
  }
  return out;
}

/** `length` random base32 characters (5 random bits each). */
export function randomBase32(length: number): string {
  return base32(crypto.getRandomValues(new Uint8Array(Math.ceil((length * 5) / 8))), length);
}

/** Equality that takes the same time wherever the strings differ (MACs, token hashes). */
export function constantTimeEqual(a: string, b: string): boolean {
  if (a.length !== b.length) return false;
  let diff = 0;
  for (let i = 0; i < a.length; i++) diff |= a.charCodeAt(i) ^ b.charCodeAt(i);
  return diff === 0;
}
