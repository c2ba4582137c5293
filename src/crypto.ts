/**
 * @module crypto
 * The hashing helpers Waymark uses everywhere (Web Crypto, so they run in workerd and Node).
 */

export async function sha256Hex(value: string): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(value));
  return Array.from(new Uint8Array(digest), (b) => b.toString(16).padStart(2, "0")).join("");
}
