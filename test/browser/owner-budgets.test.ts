import type { Page } from "playwright-core";
import { describe, expect, it } from "vitest";
import { testDevice } from "../support/device-keys";
import { connect, ok } from "../support/mcp-client";
import { skipBrowser, useServerAndBrowser } from "./browser";

/**
 * Budgets a token of the account cannot turn against its owner, replayed against `wrangler dev`
 * with Chromium clicking the Devices page:
 *   - a write token filling the device-pairing queue: its requests are bounded per credential, the
 *     owner's own request still goes through, a revoked token's requests go with it, and the owner
 *     clears the rest on the Devices page after confirming;
 *   - a read-only token holding every subscription slot of a workflow: slots are per credential,
 *     so the owner's client still subscribes.
 */
describe.skipIf(skipBrowser)("budgets the owner keeps", () => {
  const env = useServerAndBrowser();

  const api = async (method: string, path: string, token: string, body?: unknown) => {
    const response = await fetch(`${env.server().url}${path}`, {
      method,
      headers: { Authorization: `Bearer ${token}`, ...(body === undefined ? {} : { "Content-Type": "application/json" }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await response.text();
    return { status: response.status, body: (text ? JSON.parse(text) : {}) as Record<string, unknown> };
  };
  const owner = () => env.server().token;
  const managedToken = async (name: string, scopes: string[]) => {
    const made = await api("POST", "/api/tokens", owner(), { name, scopes });
    expect(made.status).toBe(201);
    return { id: String(made.body.id), token: String(made.body.token) };
  };
  /** `waymark device pair` as the helper sends it: a fresh key, proven held. */
  const pair = async (token: string, name: string) => api("POST", "/api/devices/pairings", token, await (await testDevice()).pairing(name));

  async function submit(page: Page, selector: string): Promise<number> {
    const [response] = await Promise.all([page.waitForResponse((r) => r.request().method() === "POST"), page.locator(selector).click()]);
    await page.waitForLoadState("load");
    return response.status();
  }

  it("a write token cannot fill the pairing queue for the owner; the owner clears waiting requests on the Devices page, after confirming", async () => {
    const agent = await managedToken("pairing flood", ["read", "write"]);
    // The attack: the agent's token asks to pair until it is refused.
    const statuses: number[] = [];
    for (let i = 0; i < 25; i++) {
      const asked = await pair(agent.token, `flood ${i}`);
      statuses.push(asked.status);
      if (asked.status !== 201) {
        expect(String(asked.body.message)).toContain("pairing requests of one token wait at once");
        break;
      }
    }
    expect(statuses).toEqual([201, 201, 201, 403]);
    // The owner's own device still pairs.
    const mine = await pair(owner(), "owner laptop");
    expect(mine.status).toBe(201);

    const context = await env.browser().newContext();
    const page = await context.newPage();
    await page.goto(`${env.server().url}/login`);
    await page.fill('input[name="token"]', owner());
    await submit(page, 'button[type="submit"]');
    await page.goto(`${env.server().url}/dashboard/devices`);
    const askedWith = async () => (await page.locator("#pairing-requests .requested-by").allInnerTexts()).sort();
    expect(await askedWith()).toEqual(["a bootstrap token", `token ${agent.id}`, `token ${agent.id}`, `token ${agent.id}`]);

    // Revoking the token takes its requests with it; the owner's stays.
    expect((await api("DELETE", `/api/tokens/${agent.id}`, owner())).status).toBe(200);
    await page.reload();
    expect(await askedWith()).toEqual(["a bootstrap token"]);

    // Another token's requests, then the owner clears everything waiting: asked first, then done.
    const other = await managedToken("second flood", ["write"]);
    for (let i = 0; i < 3; i++) expect((await pair(other.token, `other ${i}`)).status).toBe(201);
    await page.reload();
    expect(await page.locator("#pairing-requests tbody tr").count()).toBe(4);
    expect(await submit(page, "#clear-pairings button")).toBe(200);
    expect(await page.locator("#confirm-clear-pairings").innerText()).toContain("Clear these 4 pairing requests?");
    // Nothing is cleared until the owner confirms.
    expect(await page.locator("#pairing-requests tbody tr").count()).toBe(4);
    expect(await submit(page, "#confirm-clear-pairings button")).toBe(200);
    expect(await page.locator("#pairings-cleared").innerText()).toBe("Cleared 4 pairing requests: their codes no longer work.");
    expect(await page.locator("#pairing-requests").count()).toBe(0);
    // The cleared codes no longer work; the token may ask again.
    await page.fill('input[name="code"]', String(mine.body.code));
    expect(await submit(page, "#pair-device button")).toBe(404);
    expect((await pair(other.token, "again")).status).toBe(201);
    await context.close();
  }, 120_000);

  it("a read-only token holding every subscription slot of a workflow leaves the owner's client its own", async () => {
    const agent = await connect(env.server(), { negotiation: "auto", name: "agent" });
    const { workflow_id } = await ok<{ workflow_id: string }>(agent, "start_workflow", { name: "Followed" });
    const uri = `waymark://workflows/${workflow_id}`;
    const reader = await managedToken("dashboard script", ["read"]);
    const scripted = await connect({ url: env.server().url, token: reader.token }, { negotiation: "auto", name: "slot holder" });
    // The attack: the read-only token holds every slot it can.
    const held = [];
    for (;;) {
      const opened = await scripted.listen({ resourceSubscriptions: [uri] }).catch((error: Error) => error);
      if (opened instanceof Error) {
        expect(opened.message).toContain(`TOO_MANY_SUBSCRIPTIONS: ${uri}`);
        break;
      }
      held.push(opened);
      expect(held.length).toBeLessThanOrEqual(8);
    }
    expect(held).toHaveLength(8);
    // The owner's client still follows the workflow, and hears about new work.
    const updated = new Promise<string>((resolve) => {
      agent.setNotificationHandler("notifications/resources/updated", (notification) => resolve(notification.params.uri));
    });
    const followed = await agent.listen({ resourceSubscriptions: [uri] });
    await ok(agent, "start_task", { workflow_id, name: "Next", goal: "More work" });
    expect(await updated).toBe(uri);
    await followed.close();
    for (const subscription of held) await subscription.close();
    await scripted.close();
    await agent.close();
  }, 120_000);
});
