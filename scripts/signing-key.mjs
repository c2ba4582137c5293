#!/usr/bin/env node
/**
 * Prints a value for WAYMARK_SIGNING_KEYS: a JSON array whose first entry is a new Ed25519 private
 * key (JWK) that signs from now on (`not_before`). With --rotate, reads the current value on stdin
 * and prints the new key followed by every old key's public part only, each with the period it
 * signed in (the key that was signing gets `not_after`: now), so statements the old keys signed
 * stay verifiable while only the new key can sign, and a statement dated after a key's period is
 * refused. With --compromised <kid> (the key id `waymark verify` and the well-known document name),
 * that key is marked compromised: everything it signed is refused from then on. A compromised
 * signing key must be rotated out at the same time (--rotate --compromised <kid>).
 *
 *   npm run -s signing-key | npx wrangler secret put WAYMARK_SIGNING_KEYS
 *   (the current value) | npm run -s signing-key -- --rotate | npx wrangler secret put WAYMARK_SIGNING_KEYS
 *   (the current value) | npm run -s signing-key -- --compromised <kid> [--rotate] | npx wrangler secret put WAYMARK_SIGNING_KEYS
 */
import { createHash, generateKeyPairSync } from "node:crypto";
import { readFileSync } from "node:fs";
import { parseArgs } from "node:util";

const { values } = parseArgs({ options: { rotate: { type: "boolean" }, compromised: { type: "string", multiple: true } } });
const now = new Date().toISOString();
/** RFC 7638 thumbprint, as @waymark/protocol/statement computes a key's id. */
const kidOf = (x) => createHash("sha256").update(`{"crv":"Ed25519","kty":"OKP","x":"${x}"}`, "utf8").digest("base64url");
/** The period and state a key keeps when it stops signing. */
const lifetime = (key, stopped) => ({
  ...(key.not_before ? { not_before: key.not_before } : {}),
  ...(key.not_after || stopped ? { not_after: key.not_after ?? now } : {}),
  ...(key.compromised_at ? { compromised_at: key.compromised_at } : {}),
});

function fail(message) {
  process.stderr.write(`signing-key: ${message}\n`);
  process.exit(2);
}

function fresh() {
  const { privateKey } = generateKeyPairSync("ed25519");
  const { kty, crv, x, d } = privateKey.export({ format: "jwk" });
  return { kty, crv, x, d, not_before: now };
}

const compromised = new Set(values.compromised ?? []);
if (!values.rotate && compromised.size === 0) {
  process.stdout.write(`${JSON.stringify([fresh()])}\n`);
  process.exit(0);
}
let current;
try {
  current = JSON.parse(readFileSync(0, "utf8"));
} catch {
  fail("stdin must be the current WAYMARK_SIGNING_KEYS (a JSON array)");
}
if (!Array.isArray(current) || current.length === 0) fail("stdin must be the current WAYMARK_SIGNING_KEYS (a non-empty JSON array)");
const known = new Set(current.map((key) => kidOf(key.x)));
for (const kid of compromised)
  if (!known.has(kid)) fail(`--compromised ${kid}: no key of the current value has this id (${[...known].join(", ")})`);
if (!values.rotate && compromised.has(kidOf(current[0].x))) fail("the signing key (the first) is compromised: add --rotate to replace it");

const mark = (key) => (compromised.has(kidOf(key.x)) && !key.compromised_at ? { ...key, compromised_at: now } : key);
const keys = values.rotate
  ? [fresh(), ...current.map((old, i) => ({ kty: old.kty, crv: old.crv, x: old.x, ...lifetime(mark(old), i === 0) }))]
  : current.map(mark);
process.stdout.write(`${JSON.stringify(keys)}\n`);
