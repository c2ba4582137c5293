/**
 * @module test/support/oauth-client
 * A remote MCP client's side of OAuth, as the SDK v1 asks applications to provide it (kept in
 * memory), the client application's redirect endpoint on 127.0.0.1 that receives the
 * authorization code from the browser, and the token endpoint calls a client makes itself.
 */
import { createServer, type Server } from "node:http";
import type { OAuthClientProvider } from "@modelcontextprotocol/sdk/client/auth.js";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { OAuthClientInformationMixed, OAuthClientMetadata, OAuthTokens } from "@modelcontextprotocol/sdk/shared/auth.js";
import { freePort } from "./dev-server.ts";

export class MemoryOAuthProvider implements OAuthClientProvider {
  client: OAuthClientInformationMixed | undefined;
  saved: OAuthTokens | undefined;
  verifier = "";
  authorizationUrl: URL | null = null;
  /** A client identified by its metadata document's URL (CIMD) instead of dynamic registration. */
  readonly clientMetadataUrl: string | undefined;
  private readonly callback: string;
  private readonly name: string;
  // No parameter properties: Node's type stripping (benches) cannot run them.
  constructor(callback: string, options: { name?: string; clientMetadataUrl?: string } = {}) {
    this.callback = callback;
    this.name = options.name ?? "E2E <Agent> & Co";
    this.clientMetadataUrl = options.clientMetadataUrl;
  }
  get redirectUrl() {
    return this.callback;
  }
  get clientMetadata(): OAuthClientMetadata {
    return {
      client_name: this.name,
      redirect_uris: [this.callback],
      grant_types: ["authorization_code", "refresh_token"],
      response_types: ["code"],
      token_endpoint_auth_method: "none",
    };
  }
  clientInformation() {
    return this.client;
  }
  saveClientInformation(info: OAuthClientInformationMixed) {
    this.client = info;
  }
  tokens() {
    return this.saved;
  }
  saveTokens(tokens: OAuthTokens) {
    this.saved = tokens;
  }
  redirectToAuthorization(url: URL) {
    this.authorizationUrl = url;
  }
  saveCodeVerifier(verifier: string) {
    this.verifier = verifier;
  }
  codeVerifier() {
    return this.verifier;
  }
}

export interface CallbackServer {
  url: string;
  /** The next authorization code the browser brings (each call waits for a new one). */
  code: () => Promise<string>;
  close: () => Promise<void>;
}

/** The client application's redirect endpoint: it receives the authorization code from the browser. */
export async function callbackServer(): Promise<CallbackServer> {
  const port = await freePort();
  const waiting: ((code: string) => void)[] = [];
  const arrived: string[] = [];
  const server: Server = createServer((request, response) => {
    const url = new URL(request.url ?? "/", `http://127.0.0.1:${port}`);
    const code = url.searchParams.get("code");
    response.end(code ? "Authorized; you can close this window." : `error: ${url.searchParams.get("error")}`);
    if (!code) return;
    const next = waiting.shift();
    if (next) next(code);
    else arrived.push(code);
  });
  await new Promise<void>((resolve) => server.listen(port, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${port}/callback`,
    code: () => {
      const ready = arrived.shift();
      return ready ? Promise.resolve(ready) : new Promise<string>((resolve) => waiting.push(resolve));
    },
    close: () => new Promise((r) => server.close(() => r())),
  };
}

/** An SDK v1 client connected to /mcp with the provider's tokens (it registers and refreshes on its own). */
export async function connectWithOAuth(serverUrl: string, provider: MemoryOAuthProvider, name = "oauth-e2e") {
  const transport = new StreamableHTTPClientTransport(new URL(`${serverUrl}/mcp`), { authProvider: provider });
  const client = new Client({ name, version: "1.0.0" });
  await client.connect(transport);
  return { client, transport };
}

/** Exchanges the authorization code for tokens with the provider's PKCE verifier, as the SDK does after the redirect. */
export async function finishAuthorization(serverUrl: string, provider: MemoryOAuthProvider, code: string): Promise<OAuthTokens> {
  const transport = new StreamableHTTPClientTransport(new URL(`${serverUrl}/mcp`), { authProvider: provider });
  await transport.finishAuth(code);
  await transport.close();
  if (!provider.saved) throw new Error("no tokens after the code exchange");
  return provider.saved;
}

/** A refresh at the token endpoint, as a client makes it: the answer's status and body. */
export async function refresh(
  serverUrl: string,
  provider: MemoryOAuthProvider,
): Promise<{ status: number; body: Record<string, unknown> }> {
  const response = await fetch(`${serverUrl}/oauth/token`, {
    method: "POST",
    headers: { "Content-Type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams({
      grant_type: "refresh_token",
      refresh_token: String(provider.saved?.refresh_token),
      client_id: String(provider.client?.client_id),
    }).toString(),
  });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}
