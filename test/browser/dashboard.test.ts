import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Locator, Page } from "playwright-core";
import { afterAll, describe, expect, it } from "vitest";
import { cleanupTempDirs, Repo, tempDir } from "../../client-helper/test/fixtures";
import { ensureBuilt } from "../../client-helper/test/support";
import type { CallTool } from "../pages/fixture";
import { connectThroughHelper } from "../support/agents";
import { freePort, startDevServer } from "../support/dev-server";
import { ok } from "../support/mcp-client";
import { launchChromium, skipBrowser, useServerAndBrowser } from "./browser";

/** Clicks a submit button and returns the status of the POST it sent (303 = accepted). */
async function submit(page: Page, button: Locator): Promise<number> {
  const [response] = await Promise.all([page.waitForResponse((r) => r.request().method() === "POST"), button.click()]);
  await page.waitForLoadState("load");
  return response.status();
}

async function signIn(page: Page, baseUrl: string, token: string): Promise<number> {
  await page.goto(`${baseUrl}/login`);
  await page.fill('input[name="token"]', token);
  return submit(page, page.locator('button[type="submit"]'));
}

/**
 * Every dashboard form, clicked in Chromium against `wrangler dev`: the browser sends
 * what browsers send (Origin: null under Referrer-Policy: no-referrer, Sec-Fetch-Site),
 * so these pass only if the server accepts real same-origin forms.
 */
describe.skipIf(skipBrowser)("dashboard forms in Chromium", () => {
  const env = useServerAndBrowser();
  const callTool: CallTool = (name, args) => env.callTool(name, args);

  it("sign in, rotate, set expiry, revoke and sign out by clicking; a replayed cookie is refused", async () => {
    const wf = await callTool("start_workflow", { name: "Clicked workflow" });
    const id = String(wf.workflow_id);
    const firstUrl = String(wf.share_url);
    const context = await env.browser().newContext();
    const page = await context.newPage();

    expect(await signIn(page, env.server().url, env.server().token)).toBe(303);
    expect(new URL(page.url()).pathname).toBe("/dashboard");
    const row = page.locator(`tr[id="${id}"]`);
    expect(await row.innerText()).toContain("Clicked workflow");
    await row.locator(".share-manage summary").click();

    expect(await submit(page, row.locator('form:has(input[value="rotate"]) button'))).toBe(303);
    const rotatedUrl = await page.locator("#shown-link a").getAttribute("href");
    expect(rotatedUrl).toMatch(/\/s\/sh_/);
    expect(rotatedUrl).not.toBe(firstUrl);
    expect((await fetch(firstUrl)).status).toBe(404);
    expect((await fetch(String(rotatedUrl))).status).toBe(200);

    await row.locator(".share-manage summary").click();
    await row.locator('form:has(input[value="set_expiry"]) select').selectOption("3600");
    expect(await submit(page, row.locator('form:has(input[value="set_expiry"]) button'))).toBe(303);
    expect(await page.locator(`tr[id="${id}"]`).innerText()).toContain("active, expires");

    await page.locator(`tr[id="${id}"] .share-manage summary`).click();
    // Revoking asks first; the confirming form revokes.
    expect(await submit(page, page.locator(`tr[id="${id}"] form:has(input[value="revoke"]) button`))).toBe(200);
    expect(await page.locator("h1").innerText()).toBe(`Revoke the share link of workflow ${id}?`);
    expect(await submit(page, page.locator("#confirm-form button"))).toBe(303);
    expect(await page.locator(`tr[id="${id}"]`).innerText()).toContain("revoked");
    expect((await fetch(String(rotatedUrl))).status).toBe(410);

    const cookie = (await context.cookies()).map((c) => `${c.name}=${c.value}`).join("; ");
    expect(cookie).toContain("waymark_session=");
    expect(await submit(page, page.locator('form[action="/logout"] button'))).toBe(303);
    expect(new URL(page.url()).pathname).toBe("/login");
    const replayed = await fetch(`${env.server().url}/dashboard`, { headers: { Cookie: cookie }, redirect: "manual" });
    expect(replayed.status).toBe(303);
    expect(replayed.headers.get("Location")).toBe("/login");
    await context.close();
  });

  it("shows times in the viewer's time zone, UTC in the markup and on hover", async () => {
    const wf = await callTool("start_workflow", { name: "Timed workflow" });
    const context = await env.browser().newContext({ timezoneId: "Asia/Tokyo" });
    const page = await context.newPage();
    expect(await signIn(page, env.server().url, env.server().token)).toBe(303);
    // The dashboard lists a workflow once the account index has it (within 2 s of its writes).
    const row = page.locator(`tr[id="${String(wf.workflow_id)}"]`);
    for (let i = 0; i < 40 && (await row.count()) === 0; i++) {
      await new Promise((resolve) => setTimeout(resolve, 250));
      await page.reload();
    }
    const updated = row.locator("time").first();
    expect(await updated.innerText()).toMatch(/GMT\+9/);
    expect(await updated.getAttribute("datetime")).toMatch(/Z$/);
    expect(await updated.getAttribute("title")).toMatch(/^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC$/);
    await context.close();
  });

  it("a wrong token is refused in the form, not with 403", async () => {
    const page = await env.browser().newPage();
    expect(await signIn(page, env.server().url, "not-the-token-0123456789")).toBe(401);
    expect(await page.locator("[role=alert]").innerText()).toContain("not valid");
    await page.close();
  });
});

describe.skipIf(skipBrowser)("the dashboard tells apart workflows of one name from different repositories", () => {
  const env = useServerAndBrowser();
  afterAll(() => cleanupTempDirs());

  /** A real repository with one commit on `branch`, and `remote` as its origin when given. */
  function repository(branch: string, remote: string | null): Repo {
    const repo = Repo.init().write("README.md", `${branch}\n`).commitAll("initial");
    repo.git("checkout", "-q", "-B", branch);
    if (remote) repo.git("remote", "add", "origin", remote);
    return repo;
  }

  it("each row names its repository and branch, as the helper reported them at start_workflow", async () => {
    ensureBuilt();
    const cache = tempDir("waymark-cache-");
    const repos = {
      acme: repository("main", "git@github.com:acme/app.git"),
      globex: repository("feature/billing", "https://user:secret@gitlab.example.com/globex/app.git"),
      local: repository("release", null),
    };
    const ids: Record<string, string> = {};
    for (const [key, repo] of Object.entries(repos)) {
      const agent = await connectThroughHelper(env.server(), repo.dir, { cacheHome: cache });
      try {
        ids[key] = String((await ok(agent, "start_workflow", { name: "Release notes" })).workflow_id);
      } finally {
        await agent.close();
      }
    }
    // One name, three repositories: three workflows (resume by name never crosses repositories).
    expect(new Set(Object.values(ids)).size).toBe(3);

    const page = await env.browser().newPage();
    expect(await signIn(page, env.server().url, env.server().token)).toBe(303);
    const cell = (key: string) => page.locator(`tr[id="${ids[key]}"] td[data-label="repository"]`);
    // The dashboard lists a workflow once the account index has it (within 2 s of its writes).
    for (let i = 0; i < 40 && (await cell("local").count()) === 0; i++) {
      await new Promise((resolve) => setTimeout(resolve, 250));
      await page.reload();
    }
    expect(await page.locator("table.workflows thead th").allInnerTexts()).toContain("Repository");
    expect(await cell("acme").innerText()).toBe("github.com/acme/app\nbranch main");
    // The remote as shown never carries its credentials.
    expect(await cell("globex").innerText()).toBe("gitlab.example.com/globex/app\nbranch feature/billing");
    expect(await cell("local").innerText()).toMatch(/^local repository [0-9a-f]{12}\nbranch release$/);
    expect(await page.content()).not.toContain("secret");
    await page.close();
  });
});

describe.skipIf(skipBrowser)("dashboard sessions end when the account's token changes", () => {
  const stops: (() => Promise<void>)[] = [];
  afterAll(async () => {
    for (const stop of stops.reverse()) await stop();
  });

  it("a session opened with the old token is refused after rotation", async () => {
    const port = await freePort();
    const persistTo = mkdtempSync(join(tmpdir(), "waymark-rotate-"));
    stops.push(async () => rmSync(persistTo, { recursive: true, force: true }));
    const before = await startDevServer({ port, persistTo, vars: { WAYMARK_TOKENS: "team:team-token-before-0123456789" } });
    const browser = await launchChromium();
    stops.push(() => browser.close());
    const context = await browser.newContext();
    const page = await context.newPage();
    await page.goto(`${before.url}/login`);
    await page.fill('input[name="token"]', "team-token-before-0123456789");
    await Promise.all([page.waitForURL(`${before.url}/dashboard`), page.locator('button[type="submit"]').click()]);
    await before.stop();

    const after = await startDevServer({ port, persistTo, vars: { WAYMARK_TOKENS: "team:team-token-after-0123456789" } });
    stops.push(() => after.stop());
    const response = await page.goto(`${after.url}/dashboard`);
    expect(new URL(page.url()).pathname).toBe("/login");
    expect(response?.status()).toBe(200);
  }, 180_000);
});
