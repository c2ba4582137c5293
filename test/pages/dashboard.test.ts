import { describe, expect, it } from "vitest";
import { TOKENS, workerFetch } from "../support/worker";
import { streamedBody } from "../worker/streamed-body";
import { toolCaller } from "./fixture";

const ORIGIN = "http://localhost";
const acme = toolCaller(workerFetch, `${ORIGIN}/mcp`, TOKENS.acme);

async function login(token: string, headers: Record<string, string> = { Origin: ORIGIN }) {
  return workerFetch(`${ORIGIN}/login`, {
    method: "POST",
    headers: { "Content-Type": "application/x-www-form-urlencoded", ...headers },
    body: new URLSearchParams({ token }).toString(),
    redirect: "manual",
  });
}

async function session(token: string = TOKENS.acme): Promise<string> {
  const response = await login(token);
  const cookie = response.headers.get("Set-Cookie") ?? "";
  return cookie.split(";")[0] ?? "";
}

const form = (cookie: string, fields: Record<string, string>, origin = ORIGIN) => ({
  method: "POST",
  headers: { "Content-Type": "application/x-www-form-urlencoded", Cookie: cookie, Origin: origin },
  body: new URLSearchParams(fields).toString(),
  redirect: "manual" as const,
});

describe("dashboard", () => {
  it("the sign-in page says where a token comes from, tied to the token field", async () => {
    const page = await (await workerFetch(`${ORIGIN}/login`)).text();
    const source = /<p id="token-source"[^>]*>(.*?)<\/p>/s.exec(page)?.[1] ?? "";
    expect(source).toContain("the development token <code>npm start</code> prints");
    expect(source).toContain("<code>.wrangler/dev-token</code>");
    expect(source).toContain("<strong>Tokens</strong> page (<code>/dashboard/tokens</code>");
    expect(page).toMatch(/<input type="password" name="token"[^>]*aria-describedby="token-source"/);
  });

  it("needs a session; the login form sets a signed HttpOnly SameSite=Strict cookie (__Host- over https)", async () => {
    const anonymous = await workerFetch(`${ORIGIN}/dashboard`, { redirect: "manual" });
    expect(anonymous.status).toBe(303);
    expect(anonymous.headers.get("Location")).toBe("/login");
    const bad = await login("wrong-token");
    expect(bad.status).toBe(401);
    expect(bad.headers.get("Set-Cookie")).toBeNull();
    const good = await login(TOKENS.acme);
    expect(good.status).toBe(303);
    const cookie = good.headers.get("Set-Cookie") ?? "";
    expect(cookie).toMatch(/^waymark_session=acme\.[a-z2-7]{26}\.[A-Za-z0-9%+/]+; Max-Age=43200; Path=\/; HttpOnly; SameSite=Strict$/);
    // Over https: the __Host- prefix (Secure, Path=/, no Domain), so a sibling subdomain cannot plant one.
    const secure = await workerFetch("https://waymark.example/login", {
      method: "POST",
      headers: { "Content-Type": "application/x-www-form-urlencoded", Origin: "https://waymark.example" },
      body: new URLSearchParams({ token: TOKENS.acme }).toString(),
      redirect: "manual",
    });
    const secureCookie = secure.headers.get("Set-Cookie") ?? "";
    expect(secureCookie).toMatch(/^__Host-waymark_session=acme\./);
    expect(secureCookie).toContain("; Secure");
    expect(secureCookie).not.toContain("Domain");
    const plainOverHttps = await workerFetch("https://waymark.example/dashboard", {
      headers: { Cookie: cookie.split(";")[0] ?? "" },
      redirect: "manual",
    });
    expect(plainOverHttps.status).toBe(303);
    expect(cookie).not.toContain(TOKENS.acme);
  });

  it("refuses cross-site form posts and forged cookies", async () => {
    expect((await login(TOKENS.acme, { Origin: "https://evil.example" })).status).toBe(403);
    expect((await login(TOKENS.acme, { "Sec-Fetch-Site": "cross-site" })).status).toBe(403);
    const cookie = await session();
    // Change the signature's second-to-last character: the last one before "=" padding also carries
    // unused bits, so changing it can leave the signature's bytes as they were.
    const flipped = cookie.replace(/(.)(.)%3D$/, (_m, char: string, last: string) => `${char === "A" ? "B" : "A"}${last}%3D`);
    expect(flipped).not.toBe(cookie);
    for (const forged of [cookie.replace("waymark_session=acme.", "waymark_session=globex."), flipped]) {
      const page = await workerFetch(`${ORIGIN}/dashboard`, { headers: { Cookie: forged }, redirect: "manual" });
      expect(page.status).toBe(303);
    }
    const wf = await acme("start_workflow", { name: "csrf target" });
    const csrf = await workerFetch(
      `${ORIGIN}/dashboard/workflows/${String(wf.workflow_id)}/share`,
      form(cookie, { action: "revoke" }, "https://evil.example"),
    );
    expect(csrf.status).toBe(403);
    expect((await workerFetch(String(wf.share_url))).status).toBe(200);
  });

  it("lists the account's workflows and manages their links", async () => {
    const wf = await acme("start_workflow", { name: "<b>Dashboard</b> listed" });
    const other = await toolCaller(workerFetch, `${ORIGIN}/mcp`, TOKENS.globex)("start_workflow", { name: "Globex only" });
    const id = String(wf.workflow_id);
    const cookie = await session();
    const list = await (await workerFetch(`${ORIGIN}/dashboard`, { headers: { Cookie: cookie } })).text();
    expect(list).toContain("&lt;b&gt;Dashboard&lt;/b&gt; listed");
    expect(list).not.toContain("Globex only");
    expect(list).not.toContain(String(other.workflow_id));

    const rotated = await workerFetch(
      `${ORIGIN}/dashboard/workflows/${id}/share`,
      form(cookie, { action: "rotate", expires_in_seconds: "86400" }),
    );
    expect(rotated.status).toBe(303);
    const shownPage = await (await workerFetch(`${ORIGIN}${rotated.headers.get("Location")}`, { headers: { Cookie: cookie } })).text();
    const newUrl = /href="(http:\/\/localhost\/s\/sh_[a-z2-7_]+)"/.exec(shownPage)?.[1];
    expect(newUrl).toBeDefined();
    expect(newUrl).not.toBe(wf.share_url);
    expect(shownPage).toContain("active, expires");
    expect((await workerFetch(String(wf.share_url))).status).toBe(404);
    expect((await workerFetch(String(newUrl))).status).toBe(200);

    // Revoking asks first: the first form only shows the question; its own form revokes.
    const asked = await workerFetch(`${ORIGIN}/dashboard/workflows/${id}/share`, form(cookie, { action: "revoke" }));
    expect(asked.status).toBe(200);
    const question = await asked.text();
    expect(question).toContain(`Revoke the share link of workflow ${id}?`);
    expect(question).toContain('<input type="hidden" name="confirmed" value="yes">');
    expect((await workerFetch(String(newUrl))).status).toBe(200);
    await workerFetch(`${ORIGIN}/dashboard/workflows/${id}/share`, form(cookie, { action: "revoke", confirmed: "yes" }));
    expect((await workerFetch(String(newUrl))).status).toBe(410);
    const after = await (await workerFetch(`${ORIGIN}/dashboard`, { headers: { Cookie: cookie } })).text();
    expect(after).toContain(">revoked<");

    // Another account cannot manage this workflow even with a valid session.
    const globex = await session(TOKENS.globex);
    const foreign = await workerFetch(`${ORIGIN}/dashboard/workflows/${id}/share`, form(globex, { action: "rotate" }));
    expect(foreign.status).toBe(404);

    const logout = await workerFetch(`${ORIGIN}/logout`, form(cookie, {}));
    expect(logout.headers.get("Set-Cookie")).toMatch(/^waymark_session=; Max-Age=0/);
  });

  it("sign-out ends the session server-side: the old cookie, replayed, is refused", async () => {
    const cookie = await session();
    const before = await workerFetch(`${ORIGIN}/dashboard`, { headers: { Cookie: cookie }, redirect: "manual" });
    expect(before.status).toBe(200);
    expect((await workerFetch(`${ORIGIN}/logout`, form(cookie, {}))).status).toBe(303);
    const replayed = await workerFetch(`${ORIGIN}/dashboard`, { headers: { Cookie: cookie }, redirect: "manual" });
    expect(replayed.status).toBe(303);
    expect(replayed.headers.get("Location")).toBe("/login");
    const search = await workerFetch(`${ORIGIN}/api/search?q=anything`, { headers: { Cookie: cookie } });
    expect(search.status).toBe(401);
  });

  it("successful sign-ins cost nothing; one client's failures lock out no one else", async () => {
    const from = (ip: string | null): Record<string, string> => (ip ? { Origin: ORIGIN, "CF-Connecting-IP": ip } : { Origin: ORIGIN });
    for (let i = 0; i < 40; i++) expect((await login(TOKENS.acme, from("203.0.113.40"))).status).toBe(303);
    const statuses: number[] = [];
    for (let i = 0; i < 40; i++) statuses.push((await login(`wrong-token-${i}-0123456789`, from("203.0.113.41"))).status);
    expect(statuses.at(-1)).toBe(429);
    expect((await login(TOKENS.acme, from("198.51.100.41"))).status).toBe(303);
    // Calls from inside the deployment carry no client address: they are not pooled under one key.
    for (let i = 0; i < 40; i++) await login(`wrong-token-${i}-0123456789`, from(null));
    expect((await login(TOKENS.acme, from(null))).status).toBe(303);
  });

  it("refuses an oversized login body before parsing it", async () => {
    const { body, pulled } = streamedBody(16, 0x61);
    const started = performance.now();
    const response = await workerFetch(`${ORIGIN}/login`, {
      method: "POST",
      headers: { "Content-Type": "application/x-www-form-urlencoded", Origin: ORIGIN },
      body,
      duplex: "half",
      redirect: "manual",
    } as RequestInit);
    expect(response.status).toBe(413);
    expect(pulled()).toBeLessThan(4);
    expect(performance.now() - started).toBeLessThan(1000);
  });
});
