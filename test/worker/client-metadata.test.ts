/**
 * Client ID Metadata Documents inside workerd (src/oauth/client-metadata.ts): the Worker fetches a
 * document itself, within bounds, and hands it to the provider library through the cache the
 * library reads first; the isolate's fetch is left as the platform made it. The whole flow against
 * real document servers (a good client through consent, a 6 KB document, 4 redirects) is
 * test/e2e/oauth.test.ts.
 */
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { CIMD_CACHE, seedClientMetadata } from "../../src/oauth/client-metadata";
import { oauthApi } from "../../src/oauth/provider";
import { ORIGIN, signIn, workerFetch } from "../support/worker";

const CALLBACK = "http://127.0.0.1:9/callback";

/** An authorization request naming `clientId`: the document is refused before the rest of the request is read. */
const authorizePath = (clientId: string) =>
  `/oauth/authorize?${new URLSearchParams({ response_type: "code", client_id: clientId, redirect_uri: CALLBACK, code_challenge_method: "S256" })}`;

describe("Client ID Metadata Documents", () => {
  it("leave the isolate's fetch as the platform's own, for every request in it", async () => {
    // The app and the OAuth provider are loaded (the first request builds the provider).
    expect((await workerFetch(`${ORIGIN}/.well-known/oauth-authorization-server`)).status).toBe(200);
    // A replaced fetch (one that took the library's requests by their user agent) is a JavaScript function.
    expect(Function.prototype.toString.call(globalThis.fetch)).toMatch(/\{\s*\[native code\]\s*\}/);
  });

  it("the provider reads a document the Worker put in its cache, without fetching it", async () => {
    // A .invalid host never resolves: the client can only come from the cache.
    const clientId = "https://client.invalid/waymark-test.json";
    const document = { client_id: clientId, client_name: "Seeded client", redirect_uris: [CALLBACK], token_endpoint_auth_method: "none" };
    expect(await seedClientMetadata(clientId, new TextEncoder().encode(JSON.stringify(document)))).toBe(true);
    const client = await oauthApi(new Request(`${ORIGIN}/oauth/authorize`), env).lookupClient(clientId);
    expect(client).toMatchObject({ clientId, clientName: "Seeded client", redirectUris: [CALLBACK] });
    await (await caches.open(CIMD_CACHE)).delete(clientId);
  });

  it("a document on a private, loopback or link-local host is refused before consent, without being fetched", async () => {
    const cookie = await signIn();
    for (const clientId of [
      "https://10.1.2.3/app.json",
      "https://127.0.0.1:9/app.json",
      "https://[fd00::1]/app.json",
      "https://metadata.internal/app.json",
    ]) {
      const page = await workerFetch(`${ORIGIN}${authorizePath(clientId)}`, { headers: { Cookie: cookie } });
      expect(page.status, clientId).toBe(400);
      const text = await page.text();
      expect(text, clientId).toContain("client_id: its metadata document was refused");
      expect(text, clientId).toMatch(/hosts are not fetched/);
      expect(text, clientId).not.toContain('id="client-name"');
    }
  });

  it("the token endpoint refuses such a client as one it cannot resolve, whichever way the request names it", async () => {
    const clientId = "https://169.254.169.254/latest/meta-data.json";
    const assertion = ["e30", btoa(JSON.stringify({ iss: clientId })).replace(/=+$/, ""), "sig"].join(".");
    const bodies = [
      new URLSearchParams({ grant_type: "authorization_code", code: "x", client_id: clientId }),
      new URLSearchParams({
        grant_type: "authorization_code",
        code: "x",
        client_assertion_type: "urn:ietf:params:oauth:client-assertion-type:jwt-bearer",
        client_assertion: assertion,
      }),
    ];
    for (const body of bodies) {
      const response = await workerFetch(`${ORIGIN}/oauth/token`, {
        method: "POST",
        headers: { "Content-Type": "application/x-www-form-urlencoded" },
        body: body.toString(),
      });
      expect(response.status).toBe(401);
      const answer = (await response.json()) as { error: string; error_description: string };
      expect(answer.error).toBe("invalid_client");
      expect(answer.error_description).toContain("link-local hosts are not fetched");
    }
  });
});
