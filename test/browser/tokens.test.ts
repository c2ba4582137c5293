import type { Page } from "playwright-core";
import { describe, expect, it } from "vitest";
import { skipBrowser, useServerAndBrowser } from "./browser";

/**
 * The tokens page clicked in Chromium against `wrangler dev`: create a scoped token (the
 * secret shown once), use it, see its last use, revoke it, and see it refused.
 */
describe.skipIf(skipBrowser)("tokens page in Chromium", () => {
  // The development account: its tokens read wmk_dev_….
  const env = useServerAndBrowser({ account: "dev" });

  const listTools = (token: string) =>
    fetch(`${env.server().url}/mcp`, {
      method: "POST",
      headers: { Authorization: `Bearer ${token}`, "Content-Type": "application/json", Accept: "application/json, text/event-stream" },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "get_workflow", arguments: {} } }),
    });

  async function submit(page: Page, selector: string): Promise<number> {
    const [response] = await Promise.all([page.waitForResponse((r) => r.request().method() === "POST"), page.locator(selector).click()]);
    await page.waitForLoadState("load");
    return response.status();
  }

  /** Signed in from a browser in Tokyo: times on the page read in its zone. */
  async function signedIn(): Promise<Page> {
    const context = await env.browser().newContext({ timezoneId: "Asia/Tokyo" });
    await context.grantPermissions(["clipboard-read", "clipboard-write"], { origin: env.server().url });
    const page = await context.newPage();
    await page.goto(`${env.server().url}/login`);
    await page.fill('input[name="token"]', env.server().token);
    await submit(page, 'button[type="submit"]');
    return page;
  }

  it("create, use, see last use, revoke by clicking; the secret is shown once", async () => {
    const page = await signedIn();
    await Promise.all([page.waitForURL(/\/dashboard\/tokens$/), page.locator('a[href="/dashboard/tokens"]').first().click()]);

    await page.fill('input[name="name"]', "CI <reporting>");
    await page.locator('input[name="scopes"][value="write"]').uncheck();
    await page.locator('input[name="scopes"][value="read"]').check();
    await page.locator('select[name="expires_in_seconds"]').selectOption("2592000");
    expect(await submit(page, '#create-token button[type="submit"]')).toBe(200);
    const secret = await page.locator("#new-token-secret").innerText();
    expect(secret).toMatch(/^wmk_dev_[a-z2-7]{12}_[a-z2-7]{40}$/);
    // Shown as a success that assistive technology announces, with a button that copies it.
    expect(await page.locator("#new-token").getAttribute("role")).toBe("status");
    await page.getByRole("button", { name: "Copy token" }).click();
    await expect.poll(() => page.locator("#new-token-secret-copied").innerText()).toBe("Copied to the clipboard.");
    expect(
      await page.evaluate(() =>
        (globalThis as unknown as { navigator: { clipboard: { readText(): Promise<string> } } }).navigator.clipboard.readText(),
      ),
    ).toBe(secret);
    const id = secret.split("_").at(-2) ?? "";
    const row = page.locator(`#token-${id}`);
    expect(await row.locator(".token-name").innerText()).toBe("CI <reporting>");
    expect(await row.innerText()).toContain("read");
    expect(await row.innerText()).toContain("active, expires");
    expect(await row.locator(".last-used").innerText()).toBe("never");
    // Created and expiry times in the viewer's zone, UTC in the markup and on hover.
    for (const time of await row.locator("time").all()) {
      expect(await time.innerText()).toMatch(/GMT\+9/);
      expect(await time.getAttribute("title")).toMatch(/^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC$/);
    }
    expect(await row.locator("time").count()).toBe(2);

    // The read token calls get_workflow.
    const read = await listTools(secret);
    expect(read.status).toBe(200);
    expect(await read.text()).not.toContain("FORBIDDEN");

    // Shown once: the page, loaded again, has the row and not the secret.
    await page.goto(`${env.server().url}/dashboard/tokens`);
    expect(await page.content()).not.toContain(secret);
    let lastUsed = "never";
    for (let i = 0; i < 20 && lastUsed === "never"; i++) {
      await page.reload();
      lastUsed = await page.locator(`#token-${id} .last-used`).innerText();
    }
    expect(lastUsed).not.toBe("never");

    // Revoking asks first: the question and what it ends; Cancel keeps the token, the confirming button revokes it.
    expect(await submit(page, `#token-${id} button`)).toBe(200);
    expect(await page.locator("h1").innerText()).toBe(`Revoke token ${id}?`);
    await Promise.all([page.waitForURL(/\/dashboard\/tokens$/), page.click("text=Cancel")]);
    expect(await page.locator(`#token-${id}`).innerText()).not.toContain("revoked");
    expect(await submit(page, `#token-${id} button`)).toBe(200);
    expect(await submit(page, "#confirm-form button")).toBe(303);
    expect(await page.locator(`#token-${id}`).innerText()).toContain("revoked");
    expect((await listTools(secret)).status).toBe(401);
    await page.close();
  });

  it("a form without a scope is refused with the field named", async () => {
    const page = await signedIn();
    await page.goto(`${env.server().url}/dashboard/tokens`);
    await page.fill('input[name="name"]', "no scopes");
    await page.locator('input[name="scopes"][value="write"]').uncheck();
    expect(await submit(page, '#create-token button[type="submit"]')).toBe(400);
    expect(await page.locator("body").innerText()).toContain("scopes: must list one or more of read, write, admin");
    await page.close();
  });
});
