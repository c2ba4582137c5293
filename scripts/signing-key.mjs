#!/usr/bin/env node
/**
 * Prints a value for WAYMARK_SIGNING_KEYS: a JSON array whose first entry is a new Ed25519 private
 * key (JWK). With --rotate, reads the current value on stdin and prints the new key followed by
 * every old key's public part only, so statements the old keys signed stay verifiable while only
 * the new key can sign:
 *
 *   npm run -s signing-key | npx wrangler secret put WAYMARK_SIGNING_KEYS
 *   (the current value) | npm run -s signing-key -- --rotate | npx wrangler secret put WAYMARK_SIGNING_KEYS
 */
import { generateKeyPairSync } from "node:crypto";
import { readFileSync } from "node:fs";

const { privateKey } = generateKeyPairSync("ed25519");
const { kty, crv, x, d } = privateKey.export({ format: "jwk" });
const keys = [{ kty, crv, x, d }];
if (process.argv.includes("--rotate")) {
  const current = JSON.parse(readFileSync(0, "utf8"));
  if (!Array.isArray(current)) throw new Error("--rotate: stdin must be the current WAYMARK_SIGNING_KEYS (a JSON array)");
  for (const old of current) keys.push({ kty: old.kty, crv: old.crv, x: old.x });
}
process.stdout.write(`${JSON.stringify(keys)}\n`);
