/**
 * @module device-command
 * `waymark device` and `waymark device pair`: this machine's device key (./device-key) shown, and
 * paired with the account the token belongs to. Pairing sends the public key, a name and a proof
 * that the helper holds the key; the endpoint answers a one-time code, which the owner enters on
 * the dashboard's Devices page, where the same fingerprint is shown before anything is approved.
 * It also prints the line that pins the key in a repository's allowed signers
 * (@waymark/protocol/allowed-signers), so `waymark verify` can check the device's signatures
 * without trusting the server.
 */
import { ALLOWED_SIGNERS_PATH, allowedSignerLine } from "@waymark/protocol/allowed-signers";
import type { PairingRequest } from "@waymark/protocol/device-signature";
import { DeviceKey } from "./device-key.js";
import type { Endpoint } from "./endpoint.js";

export type DeviceCommandOptions = {
  pair: boolean;
  endpoint: Endpoint | null;
  token: string | undefined;
  name: string | undefined;
  newKey: boolean;
  env: NodeJS.ProcessEnv;
  out: (text: string) => void;
  timeoutMs?: number;
};

type Pairing = { code: string; fingerprint: string; expires_at: string; approve_at: string };

function describe(key: DeviceKey): string {
  return (
    `This device: ${key.name}\nFingerprint: ${key.fingerprint}\nKey file:    ${key.path} (never leaves this machine)\nPublic key:  ${key.publicKey}\n` +
    `\nFor \`waymark verify\` to check what this device signs, a repository pins its key: add this line to ${ALLOWED_SIGNERS_PATH}\n` +
    `(one per trusted device; valid-after="YYYYMMDDZ" and valid-before="…" options bound when it counts):\n\n` +
    `    ${allowedSignerLine(key.name, key.publicKey)}\n`
  );
}

async function requestPairing(endpoint: Endpoint, token: string, request: PairingRequest, timeoutMs: number): Promise<Pairing> {
  const url = `${endpoint.origin}/api/devices/pairings`;
  let response: Response;
  try {
    response = await fetch(url, {
      method: "POST",
      headers: { Authorization: `Bearer ${token}`, "Content-Type": "application/json" },
      body: JSON.stringify(request),
      redirect: "error",
      signal: AbortSignal.timeout(timeoutMs),
    });
  } catch (error) {
    throw new Error(
      `cannot reach ${url} (${error instanceof Error ? error.message : String(error)}); check --url and that the endpoint is up`,
    );
  }
  const body = (await response.json().catch(() => null)) as (Partial<Pairing> & { code?: string; message?: string }) | null;
  if (response.status === 201 && body && typeof body.code === "string") return body as Pairing;
  if (response.status === 401) throw new Error(`${url} rejected the token in WAYMARK_TOKEN; set it to a token of your account`);
  throw new Error(`${url} answered HTTP ${response.status}: ${body?.message ?? "no explanation"}`);
}

/** Returns the exit code: 0 shown or paired (or already approved), 1 failure. */
export async function runDeviceCommand(options: DeviceCommandOptions): Promise<number> {
  const { out, env } = options;
  const retired = options.newKey ? DeviceKey.retire(env) : null;
  if (retired) out(`The old key was moved to ${retired}.\n`);
  const ensured = await DeviceKey.ensure({ env, name: options.name });
  if (ensured.created) out("Created a new device key.\n");
  // --name names this device from now on: what this command shows, pairing sends and the allowed-signers line says.
  const key = options.name === undefined ? ensured.key : ensured.key.rename(options.name, env);
  if (key.name !== ensured.key.name) out(`Renamed this device: ${ensured.key.name} → ${key.name}\n`);
  out(describe(key));
  if (!options.pair) {
    out("\nTo have this device's figures read “computed and signed”, pair it: waymark device pair\n");
    return 0;
  }
  if (!options.endpoint) throw new Error("no endpoint: pass --url <endpoint> (or run waymark init --url <endpoint> once)");
  if (!options.token) throw new Error("WAYMARK_TOKEN is not set: pairing asks the endpoint as your account");
  try {
    const pairing = await requestPairing(options.endpoint, options.token, key.pairingRequest(), options.timeoutMs ?? 15_000);
    out(
      `\nTo approve this device, open ${pairing.approve_at} (as an admin of the account) and enter the code:\n\n    ${pairing.code}\n\n` +
        `The code works once, until ${pairing.expires_at}. Approve only if the page shows the fingerprint ${pairing.fingerprint}.\n`,
    );
    return 0;
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    if (/already approved/.test(message)) {
      out(`\n${message.replace(/^.*?key: /, "")}\n`);
      return 0;
    }
    throw error;
  }
}
