/**
 * Rotating a deployment's signing key keeps its old exports verifiable, and a key signs only in
 * its period: a real `wrangler dev` signs an export with a key from `npm run signing-key`, is
 * restarted on the same data with the output of `npm run signing-key -- --rotate`, and
 * `waymark verify` checks the old export against the keys the deployment now publishes (the old
 * one as retired, with the period it signed in) and a new export against the new key; a key file
 * without the old key refuses the old export. A thief holding the retired key cannot sign a
 * statement dated after its period; once the deployment publishes the key as compromised
 * (`npm run signing-key -- --compromised <kid>`), everything it signed is refused.
 */
import { execFileSync, spawnSync } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { cleanupTempDirs, tempDir } from "../../client-helper/test/fixtures";
import { BIN, ensureBuilt, SYSTEM_NODE } from "../../client-helper/test/support";
import { type DevServer, startDevServer } from "../support/dev-server";
import { type ForgedExport, resignWithKeys } from "../support/export-forgery";
import { REPO_ROOT } from "../support/worker-build-setup";

const token = `dev-token-${Math.random().toString(36).slice(2, 12)}`;
let state: string;
let dir: string;
let server: DevServer | undefined;

beforeAll(() => {
  ensureBuilt();
  state = tempDir("waymark-rotation-state-");
  dir = tempDir("waymark-rotation-");
});
afterAll(async () => {
  await server?.stop();
  cleanupTempDirs();
});

/** `npm run -s signing-key [-- --rotate]`, as deploy.md says to run it. */
const signingKey = (rotate?: string, flags: string[] = ["--rotate"]) =>
  execFileSync("npm", ["run", "-s", "signing-key", ...(rotate ? ["--", ...flags] : [])], {
    cwd: REPO_ROOT,
    input: rotate,
    encoding: "utf8",
  }).trim();

async function exportOf(workflowId: string, name: string): Promise<string> {
  const response = await fetch(`${server?.url}/api/workflows/${workflowId}/export.json`, { headers: { Authorization: `Bearer ${token}` } });
  expect(response.status).toBe(200);
  const file = join(dir, name);
  writeFileSync(file, await response.text());
  return file;
}

async function startWorkflow(name: string): Promise<string> {
  const response = await fetch(`${server?.url}/mcp`, {
    method: "POST",
    headers: { Authorization: `Bearer ${token}`, "Content-Type": "application/json", Accept: "application/json, text/event-stream" },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "start_workflow", arguments: { name } } }),
  });
  const text = await response.text();
  const json = JSON.parse(
    text.startsWith("event:") || text.startsWith("data:")
      ? (text
          .split("\n")
          .find((l) => l.startsWith("data: "))
          ?.slice(6) ?? "")
      : text,
  ) as {
    result: { structuredContent: { workflow_id: string } };
  };
  return json.result.structuredContent.workflow_id;
}

const verify = (...args: string[]) => {
  const run = spawnSync(SYSTEM_NODE, [BIN, "verify", ...args], { encoding: "utf8" });
  return { code: run.status, stdout: run.stdout, stderr: run.stderr };
};

describe("a key rotation", () => {
  it("keeps old exports verifiable against the keys the deployment publishes after it", async () => {
    const first = signingKey();
    server = await startDevServer({ token, persistTo: state, vars: { WAYMARK_SIGNING_KEYS: first } });
    const old = await exportOf(await startWorkflow("Before the rotation"), "old.json");
    const oldKid = (
      JSON.parse(await (await fetch(`${server.url}/.well-known/waymark-signing-keys.json`)).text()) as { keys: { kid: string }[] }
    ).keys[0]?.kid;
    await server.stop();

    const rotated = signingKey(first);
    expect(JSON.parse(rotated)).toHaveLength(2);
    server = await startDevServer({ token, persistTo: state, vars: { WAYMARK_SIGNING_KEYS: rotated } });
    const published = (await (await fetch(`${server.url}/.well-known/waymark-signing-keys.json`)).json()) as {
      keys: { kid: string; status: string }[];
    };
    expect(published.keys.map((k) => k.status)).toEqual(["current", "retired"]);
    expect(published.keys[1]?.kid).toBe(oldKid);
    // Each key with the period it signed in: the old one from its creation to the rotation, the new one from then on.
    const [newKey, oldKey] = published.keys as unknown as { not_before: string | null; not_after: string | null }[];
    expect(oldKey?.not_after).toBe(newKey?.not_before);
    expect(Date.parse(oldKey?.not_before ?? "")).toBeLessThan(Date.parse(oldKey?.not_after ?? ""));
    expect(newKey?.not_after).toBeNull();

    const oldChecked = verify(old, "--endpoint", server.url);
    expect(oldChecked.code, oldChecked.stderr).toBe(0);
    expect(oldChecked.stdout).toContain(
      `with key ${oldKid}, the retired key of ${server.url}/.well-known/waymark-signing-keys.json (signing from ${oldKey?.not_before} to ${oldKey?.not_after})`,
    );
    const fresh = await exportOf(await startWorkflow("After the rotation"), "new.json");
    const freshChecked = verify(fresh, "--endpoint", server.url);
    expect(freshChecked.code, freshChecked.stderr).toBe(0);
    expect(freshChecked.stdout).toContain(`with key ${published.keys[0]?.kid}, the current key of`);

    // Offline: the deployment's value as a key file (its private part is ignored), and a file with the new key alone.
    const keysFile = join(dir, "keys.json");
    writeFileSync(keysFile, rotated);
    expect(verify(old, "--key", keysFile)).toMatchObject({
      code: 0,
      stdout: expect.stringContaining(`with key ${oldKid}, the retired key of`),
    });
    const newOnly = join(dir, "new-key.json");
    writeFileSync(newOnly, JSON.stringify({ kty: "OKP", crv: "Ed25519", x: (JSON.parse(rotated) as { x: string }[])[0]?.x }));
    const refused = verify(old, "--key", newOnly);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain(`signature: statement.kid: key ${oldKid} is not among the 1 key(s) given`);

    // The retired key leaks: its thief signs an edited statement dated after the rotation. Outside the key's period: refused.
    const forged = JSON.parse(readFileSync(old, "utf8")) as ForgedExport;
    const issued = new Date().toISOString();
    await resignWithKeys(forged, first, { issued_at: issued });
    const forgedFile = join(dir, "forged.json");
    writeFileSync(forgedFile, JSON.stringify(forged, null, 2));
    const late = verify(forgedFile, "--endpoint", server.url);
    expect(late.code).toBe(1);
    expect(late.stderr).toContain(
      `signature: issued ${issued}, outside the period key ${oldKid} signed in (${oldKey?.not_before} to ${oldKey?.not_after})`,
    );
    await server.stop();

    // The deployment publishes the old key as compromised: nothing it signed passes any more, whatever its date; the new key's exports still do.
    const disowned = signingKey(rotated, ["--compromised", oldKid ?? ""]);
    server = await startDevServer({ token, persistTo: state, vars: { WAYMARK_SIGNING_KEYS: disowned } });
    const now = (await (await fetch(`${server.url}/.well-known/waymark-signing-keys.json`)).json()) as { keys: { status: string }[] };
    expect(now.keys.map((k) => k.status)).toEqual(["current", "compromised"]);
    const compromised = verify(old, "--endpoint", server.url);
    expect(compromised.code).toBe(1);
    expect(compromised.stderr).toContain(`signature: key ${oldKid} is published as compromised: nothing it signed can be trusted`);
    expect(verify(fresh, "--endpoint", server.url).code).toBe(0);
  }, 240_000);
});
