/**
 * @module test/support/export-forgery
 * What a forger does to a JSON export after editing it, for the tests that show `waymark verify`
 * refusing the result: recompute the hash chain over the edited events, and sign a statement that
 * matches the edited export in every respect, with a key of their own, or with the deployment's
 * own key (a deployment that lies: the development key is derived from the dev token, which a test
 * of a local `wrangler dev` knows).
 */
import { generateKeyPairSync, sign } from "node:crypto";
import { canonicalJson, eventHash, genesisHash } from "@waymark/protocol/chain";
import { keyThumbprint, memberDigest, type SignedStatement, type StatementPayload } from "@waymark/protocol/statement";
import { signStatement } from "../../src/signing.ts";

/** The members a forgery touches; the rest of the export passes through as it is. */
export interface ForgedExport {
  [member: string]: unknown;
  events: { seq: number; at: string; type: string; task_id: string | null; data: Record<string, unknown>; hash: string }[];
  chain: { algorithm: string; genesis: string; head: string; events: number };
  statement: SignedStatement;
}

/** An attacker's re-chaining: every hash from the first event on recomputed over the edited events. */
export function rechain(doc: ForgedExport): void {
  let previous = genesisHash(String((doc.workflow as { id: string }).id));
  for (const event of doc.events) {
    event.hash = eventHash(previous, event);
    previous = event.hash;
    if (event.seq === doc.chain.events) doc.chain.head = previous;
  }
}

/** The statement's payload made to match the edited export: its events, head and every member's digest. */
function matchingPayload(doc: ForgedExport, changes: Partial<StatementPayload> = {}): StatementPayload {
  const { statement: _old, ...members } = doc;
  return {
    ...doc.statement.payload,
    events: doc.events.length,
    head: doc.events.at(-1)?.hash ?? "",
    content: Object.fromEntries(Object.entries(members).map(([name, value]) => [name, memberDigest(value)])),
    ...changes,
  };
}

/** An attacker with a key of their own (under its own id, or claiming `kid`). */
export function resign(doc: ForgedExport, kid?: string): void {
  const { privateKey, publicKey } = generateKeyPairSync("ed25519");
  const x = String(publicKey.export({ format: "jwk" }).x);
  const payload = matchingPayload(doc);
  const signature = sign(null, new TextEncoder().encode(canonicalJson(payload)), privateKey).toString("base64url");
  doc.statement = { payload, alg: "EdDSA", kid: kid ?? keyThumbprint(x), signature };
}

/** A lying deployment: the edited export signed with the deployment's own development key (`devToken`'s). */
export async function resignAsDeployment(doc: ForgedExport, devToken: string, changes: Partial<StatementPayload> = {}): Promise<void> {
  doc.statement = await signStatement({ WAYMARK_DEV_TOKEN: devToken }, matchingPayload(doc, changes));
}

/** A statement signed with `jwks` (a WAYMARK_SIGNING_KEYS value whose first key is the signer), with the payload changed as given. */
export async function resignWithKeys(doc: ForgedExport, jwks: string, changes: Partial<StatementPayload> = {}): Promise<void> {
  doc.statement = await signStatement({ WAYMARK_SIGNING_KEYS: jwks }, matchingPayload(doc, changes));
}
