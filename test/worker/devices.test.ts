import { deviceFingerprint } from "@waymark/protocol/device-signature";
import { beforeAll, describe, expect, it } from "vitest";
import { testDevice } from "../support/device-keys";
import { ORIGIN, TOKENS, workerFetch } from "../support/worker";

/**
 * The devices API through the real Worker, as a helper and an admin use it and as an agent holding
 * only the account's write token would try it: a helper pairs a key it proves it holds, only an
 * admin approves and revokes, bad input is refused by field and rule, a revoked key never comes
 * back, and another account never sees a device. (The Devices page is clicked in Chromium in
 * test/browser/provenance.test.ts.)
 */
const tokens = { write: "", read: "", admin: "" };

async function api(method: string, path: string, token: string, body?: unknown) {
  return workerFetch(`${ORIGIN}${path}`, {
    method,
    headers: { Authorization: `Bearer ${token}`, ...(body === undefined ? {} : { "Content-Type": "application/json" }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
}

beforeAll(async () => {
  for (const scope of ["read", "write", "admin"] as const) {
    const response = await api("POST", "/api/tokens", TOKENS.acme, { name: `devices ${scope}`, scopes: [scope] });
    expect(response.status).toBe(201);
    tokens[scope] = ((await response.json()) as { token: string }).token;
  }
});

describe("pairing a device", () => {
  it("a write token pairs a key it holds: a one-time code, the fingerprint, where to approve; nothing is approved yet", async () => {
    const device = await testDevice();
    const response = await api("POST", "/api/devices/pairings", tokens.write, await device.pairing("ci runner"));
    expect(response.status).toBe(201);
    const body = (await response.json()) as { code: string; fingerprint: string; expires_at: string; approve_at: string };
    expect(body.code).toMatch(/^[A-Z2-9]{4}-[A-Z2-9]{4}$/);
    expect(body.fingerprint).toBe(deviceFingerprint(device.key));
    expect(body.approve_at).toBe(`${ORIGIN}/dashboard/devices`);
    expect(Date.parse(body.expires_at) - Date.now()).toBeGreaterThan(9 * 60_000);
    // The write token cannot approve it, nor list devices.
    expect((await api("POST", "/api/devices", tokens.write, { name: "mine", key: device.key })).status).toBe(403);
    expect((await api("GET", "/api/devices", tokens.write)).status).toBe(403);
    const listed = (await (await api("GET", "/api/devices", tokens.admin)).json()) as { devices: { key: string }[] };
    expect(listed.devices.map((d) => d.key)).not.toContain(device.key);
  });

  it.each<[string, (device: Awaited<ReturnType<typeof testDevice>>) => Promise<unknown>, string]>([
    [
      "a proof made with another key",
      async (device) => ({ ...(await device.pairing("laptop")), key: (await testDevice()).key }),
      "proof: must be the device key's signature over the request",
    ],
    [
      "a proof replayed for another name",
      async (device) => ({ ...(await device.pairing("laptop")), name: "build server" }),
      "proof: must be the device key's signature over the request",
    ],
    [
      "a request signed an hour ago",
      (device) => device.pairing("laptop", Date.now() - 3_600_000),
      "requested_at: must be within 10 minutes of the server's clock (check the device's clock)",
    ],
    ["a name of control characters", (device) => device.pairing("\u001b[31mred"), "name: must be text without control characters"],
    ["a key that is not one", async (device) => ({ ...(await device.pairing("laptop")), key: "short" }), "key: must be a 32-byte Ed25519"],
  ])("refuses %s, by field and rule", async (_label, request, message) => {
    const response = await api("POST", "/api/devices/pairings", tokens.write, await request(await testDevice()));
    expect(response.status).toBe(400);
    const body = (await response.json()) as { code: string; message: string };
    expect(body.code).toBe("INPUT_VALIDATION_ERROR");
    expect(body.message).toContain(message);
  });

  it("a read token cannot ask to pair", async () => {
    const device = await testDevice();
    expect((await api("POST", "/api/devices/pairings", tokens.read, await device.pairing("laptop"))).status).toBe(403);
  });
});

describe("approving and revoking", () => {
  it("an admin approves a key, lists it, revokes it; a revoked key is never approved or paired again", async () => {
    const device = await testDevice();
    const added = await api("POST", "/api/devices", tokens.admin, { name: "  build box  ", key: device.key });
    expect(added.status).toBe(201);
    const info = (await added.json()) as { id: string; name: string; fingerprint: string; revoked_at: string | null };
    expect(info).toMatchObject({ name: "build box", fingerprint: deviceFingerprint(device.key), revoked_at: null });
    const again = await api("POST", "/api/devices", tokens.admin, { name: "twice", key: device.key });
    expect(again.status).toBe(409);
    expect(((await again.json()) as { message: string }).message).toContain("already approved for the account, as “build box”");

    // Another account neither sees nor revokes it.
    const theirs = (await (await api("GET", "/api/devices", TOKENS.globex)).json()) as { devices: { id: string }[] };
    expect(theirs.devices.map((d) => d.id)).not.toContain(info.id);
    expect((await api("DELETE", `/api/devices/${info.id}`, TOKENS.globex)).status).toBe(404);

    const revoked = await api("DELETE", `/api/devices/${info.id}`, tokens.admin);
    expect(revoked.status).toBe(200);
    expect(((await revoked.json()) as { revoked_at: string | null }).revoked_at).toEqual(expect.any(String));
    for (const retry of [
      () => api("POST", "/api/devices", tokens.admin, { name: "back", key: device.key }),
      async () => api("POST", "/api/devices/pairings", tokens.write, await device.pairing("back")),
    ]) {
      const response = await retry();
      expect(response.status).toBe(409);
      expect(((await response.json()) as { message: string }).message).toContain("was revoked at");
    }
  });

  it("refuses an unknown device id and a malformed one alike", async () => {
    for (const id of ["aaaaaaaaaaaa", "..%2f..%2fx", "x".repeat(500)]) {
      const response = await api("DELETE", `/api/devices/${id}`, tokens.admin);
      expect(response.status).toBe(404);
      expect(((await response.json()) as { code: string }).code).toBe("NOT_FOUND");
    }
  });
});
