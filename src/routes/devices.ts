/**
 * @module routes/devices
 * The devices whose helpers sign (account/devices), mounted by src/index.ts:
 *   POST   /api/devices/pairings         {key, name, requested_at, proof} → a one-time pairing code (201);
 *                                        `write` scope: the helper's own token asks, proving it holds the key
 *   GET    /api/devices                  the account's devices (admin)
 *   POST   /api/devices                  {name, key} → approve a device by its public key (admin, 201)
 *   DELETE /api/devices/:id              revoke (admin)
 *   GET    /dashboard/devices            the devices page
 *   POST   /dashboard/devices/pair       {code}: the device the code stands for, shown for confirmation
 *   POST   /dashboard/devices/approve    {code, name}: approve it
 *   POST   /dashboard/devices/pairings/clear  {confirmed?}: the waiting pairing requests, listed for
 *                                        confirmation; with `confirmed=yes`, cleared (their codes stop working)
 *   POST   /dashboard/devices/:id/revoke
 * Approving and revoking need the `admin` scope (a session opened with an admin token on the
 * pages); the API takes a bearer token, the pages the session cookie; forms pass hono/csrf.
 */
import { DEVICE_KEY_PATTERN, SIGNATURE_PATTERN } from "@waymark/protocol/device-signature";
import { type Context, Hono } from "hono";
import { z } from "zod";
import type { PendingDevice } from "../account/devices";
import { pairingProblem } from "../domain/device-signature";
import { apiError } from "../http/api-errors";
import { formCsrf } from "../http/csrf";
import { requireAccount } from "../http/require-account";
import { dataHeaders, noStore, pageHeaders } from "../http/security-headers";
import type { AppEnv } from "../http/types";
import { formBody, jsonBody } from "../http/validate";
import { LIMITS } from "../limits";
import { renderDevicesPage } from "../pages/devices-page";
import { accountStub } from "../stubs";
import { askFirst, confirmedForm } from "./forms";

type Ctx = Context<AppEnv>;

export const deviceRoutes = new Hono<AppEnv>();

const apiWrite = requireAccount({ bearer: true, session: false, otherwise: "json", action: "device.pair" });
const apiAdmin = requireAccount({ bearer: true, session: false, otherwise: "json", action: "device.manage" });
const pageAdmin = requireAccount({ bearer: false, session: true, otherwise: "login", action: "device.manage" });

for (const path of ["/api/devices", "/api/devices/*"]) deviceRoutes.use(path, noStore, dataHeaders);
for (const path of ["/dashboard/devices", "/dashboard/devices/*"]) deviceRoutes.use(path, noStore, pageHeaders);

const NAME_RULE = "is required (a name saying which machine this is)";
const deviceName = z
  .string({ error: NAME_RULE })
  .transform((name) => name.trim())
  .refine((name) => name !== "", { error: NAME_RULE })
  .refine((name) => name.length <= LIMITS.DEVICE_NAME, { error: `must be at most ${LIMITS.DEVICE_NAME} characters` })
  .refine((name) => name.isWellFormed() && !/[\u0000-\u001f\u007f]/.test(name), { error: "must be text without control characters" });
const deviceKey = z
  .string({ error: "is required" })
  .regex(DEVICE_KEY_PATTERN, { error: "must be a 32-byte Ed25519 public key, base64url without padding (waymark device prints it)" });

const pairingJson = z.strictObject(
  {
    key: deviceKey,
    name: deviceName,
    requested_at: z.number({ error: "must be the time of the request, ms since the epoch" }).int().min(0),
    proof: z.string({ error: "is required" }).regex(SIGNATURE_PATTERN, { error: "must be a 64-byte Ed25519 signature, base64url" }),
  },
  { error: 'must be a JSON object {"key", "name", "requested_at", "proof"} (waymark device pair sends it)' },
);
const newDeviceJson = z.strictObject(
  { name: deviceName, key: deviceKey },
  { error: 'must be a JSON object {"name": "...", "key": "<base64url Ed25519 public key>"}' },
);
const CODE_RULE = "must be the pairing code waymark device pair printed (like ABCD-EFGH)";
const pairingCode = z.string({ error: CODE_RULE }).regex(/^[A-Za-z0-9\s-]{8,20}$/, { error: CODE_RULE });

const devices = (c: Ctx) => accountStub(c.env, c.var.account);

// ── JSON API ────────────────────────────────────────────────────────────────

deviceRoutes.post("/api/devices/pairings", apiWrite, jsonBody(pairingJson), async (c) => {
  const request = c.req.valid("json");
  // The device proves it holds the key it asks to pair, recently.
  const problem = await pairingProblem(request, Date.now());
  if (problem) return apiError(c, "INPUT_VALIDATION_ERROR", problem);
  // Counted against the credential that asks: one token cannot fill the queue for the others.
  const result = await devices(c).requestDevicePairing({ key: request.key, name: request.name, credential: c.var.principal.credential });
  if (!result.ok) return apiError(c, result.code, result.message);
  return c.json({ ...result.value, approve_at: `${new URL(c.req.url).origin}/dashboard/devices` }, 201);
});

deviceRoutes.get("/api/devices", apiAdmin, async (c) => c.json({ devices: await devices(c).listDevices() }));

deviceRoutes.post("/api/devices", apiAdmin, jsonBody(newDeviceJson), async (c) => {
  const input = c.req.valid("json");
  const result = await devices(c).addDevice(c.var.account, input.name, input.key);
  if (!result.ok) return apiError(c, result.code, result.message);
  return c.json(result.value, 201);
});

deviceRoutes.delete("/api/devices/:id", apiAdmin, async (c) => {
  const result = await devices(c).revokeDevice(c.var.account, c.req.param("id"));
  if (!result.ok) return apiError(c, result.code, result.message);
  return c.json(result.value);
});

// ── The devices page ────────────────────────────────────────────────────────

async function devicesPage(
  c: Ctx,
  extra: { pending?: { code: string; device: PendingDevice }; problem?: string; confirmClear?: boolean; cleared?: number },
  status: 200 | 400 | 404 = 200,
) {
  const [listed, requests] = await Promise.all([devices(c).listDevices(), devices(c).devicePairingRequests()]);
  const page = renderDevicesPage(c.get("secureHeadersNonce") ?? "", { account: c.var.account, devices: listed, requests, ...extra });
  return c.html(page, status);
}

deviceRoutes.get("/dashboard/devices", pageAdmin, (c) => devicesPage(c, {}));

deviceRoutes.post("/dashboard/devices/pair", formCsrf, pageAdmin, formBody(z.object({ code: pairingCode })), async (c) => {
  const { code } = c.req.valid("form");
  const pending = await devices(c).pendingDevice(code);
  if (!pending.ok) return devicesPage(c, { problem: pending.message }, 404);
  return devicesPage(c, { pending: { code, device: pending.value } });
});

deviceRoutes.post(
  "/dashboard/devices/approve",
  formCsrf,
  pageAdmin,
  formBody(z.object({ code: pairingCode, name: deviceName })),
  async (c) => {
    const { code, name } = c.req.valid("form");
    const result = await devices(c).approveDevice(c.var.account, code, name);
    if (!result.ok) return devicesPage(c, { problem: result.message }, result.code === "NOT_FOUND" ? 404 : 400);
    return c.redirect(`/dashboard/devices#device-${result.value.id}`, 303);
  },
);

/** Clearing the waiting requests asks first: the page lists them and a second form confirms. */
deviceRoutes.post("/dashboard/devices/pairings/clear", formCsrf, pageAdmin, formBody(confirmedForm), async (c) => {
  if (c.req.valid("form").confirmed !== "yes") return devicesPage(c, { confirmClear: true });
  return devicesPage(c, { cleared: await devices(c).clearDevicePairings() });
});

deviceRoutes.post("/dashboard/devices/:id/revoke", formCsrf, pageAdmin, formBody(confirmedForm), async (c) => {
  const id = c.req.param("id");
  if (c.req.valid("form").confirmed !== "yes")
    return askFirst(c, {
      question: `Revoke device ${id}?`,
      consequence:
        'Every signature it makes from now on reads "claimed by the client"; what it signed before stays as recorded. A revoked device has to be paired again.',
      action: `/dashboard/devices/${id}/revoke`,
      confirm: "Revoke the device",
      back: "/dashboard/devices",
    });
  const result = await devices(c).revokeDevice(c.var.account, id);
  if (!result.ok) return c.text(result.message, 404);
  return c.redirect("/dashboard/devices", 303);
});
