/**
 * @module oauth/client-metadata
 * The bounds of fetching an OAuth client's metadata document (Client ID Metadata Documents: the
 * client_id is an https URL whose JSON names the client and its redirect URIs). The provider
 * library fetches the document itself, with the platform's `fetch` and the compatibility flag
 * `global_fetch_strictly_public` (public addresses only); it bounds the body to 5 KB and the
 * time to 10 s and follows redirects as fetch does. Its requests carry its own User-Agent, so a
 * guard around the isolate's `fetch` takes exactly those (every other request passes through
 * untouched) and fetches them within Waymark's bounds (LIMITS.CLIENT_METADATA_*): https at every
 * hop, at most 3 redirects each checked again, a deadline, the body read up to its bound.
 *
 * Development only (the dev token is set: `npm start`, the end-to-end tests): a loopback client_id
 * (https://127.0.0.1:PORT/…) is fetched over plain http, since a local client has no certificate
 * the runtime trusts. The provider's whole path (validation, parsing, consent, tokens) still runs.
 */
import { env } from "cloudflare:workers";
import { readBounded } from "../http/bounded-body";
import { LIMITS } from "../limits";
import { revealBidiControls } from "../pages/format";

const PROVIDER_AGENT = /^workers-oauth-provider\//;
const LOOPBACK = new Set(["127.0.0.1", "[::1]", "localhost"]);

/** A refusal the provider reports as an unresolvable client ("Client not found"); the reason goes to the log. */
function refused(reason: string): Response {
  console.warn(`client metadata document refused: ${reason}`);
  return new Response(reason, { status: 502 });
}

/** The URL to fetch for `url`, or why it may not be fetched. */
function target(url: URL): URL | string {
  if (url.protocol !== "https:") return `${url.href}: only https is fetched`;
  if (!LOOPBACK.has(url.hostname) || !(env as Env).WAYMARK_DEV_TOKEN) return url;
  const local = new URL(url.href);
  local.protocol = "http:";
  return local;
}

async function fetchDocument(platformFetch: typeof fetch, request: Request): Promise<Response> {
  const deadline = AbortSignal.timeout(LIMITS.CLIENT_METADATA_FETCH_MS);
  const signal = AbortSignal.any([deadline, request.signal]);
  let url = new URL(request.url);
  try {
    for (let hop = 0; hop <= LIMITS.CLIENT_METADATA_REDIRECTS; hop++) {
      const next = target(url);
      if (typeof next === "string") return refused(next);
      const response = await platformFetch(next, { headers: request.headers, redirect: "manual", signal });
      const location = response.headers.get("Location");
      if (response.status >= 300 && response.status < 400 && location) {
        await response.body?.cancel();
        url = new URL(location, url);
        continue;
      }
      const body = await readBounded(response, LIMITS.CLIENT_METADATA_BYTES);
      if (body === null) return refused(`${url.href}: larger than ${LIMITS.CLIENT_METADATA_BYTES} bytes`);
      return new Response(body, { status: response.status, headers: response.headers });
    }
    return refused(`${request.url}: more than ${LIMITS.CLIENT_METADATA_REDIRECTS} redirects`);
  } catch (error) {
    return refused(
      deadline.aborted ? `${url.href}: no answer within ${LIMITS.CLIENT_METADATA_FETCH_MS} ms` : `${url.href}: ${String(error)}`,
    );
  }
}

let guarded = false;

/** Installs the guard once per isolate (the provider module does, before any request). */
export function guardClientMetadataFetch(): void {
  if (guarded) return;
  guarded = true;
  const platformFetch = globalThis.fetch.bind(globalThis);
  globalThis.fetch = (input: RequestInfo | URL, init?: RequestInit) => {
    // Only the headers are read: building a Request from another request with a body would use that body up.
    const headers = new Headers(init?.headers ?? (input instanceof Request ? input.headers : undefined));
    return PROVIDER_AGENT.test(headers.get("User-Agent") ?? "")
      ? fetchDocument(platformFetch, new Request(input, init))
      : platformFetch(input, init);
  };
}

/**
 * What the consent page calls a client: the name it gave itself, with bidi controls shown as
 * code points (the page escapes the rest), and, for a client identified by its metadata
 * document's URL, that URL's host: the one thing in its name nobody else can claim.
 */
export function clientLabel(name: string | undefined, clientId: string): string {
  const shown = revealBidiControls(name || clientId);
  if (!/^https:\/\//i.test(clientId)) return shown;
  try {
    return `${shown} (${new URL(clientId).host})`;
  } catch {
    return shown;
  }
}

/** Where a redirect URI sends the answer, as the consent page says it: its host, or "a local app" for loopback. */
export function redirectHostOf(uri: string): string {
  try {
    const url = new URL(uri);
    return url.hostname === "127.0.0.1" || url.hostname === "localhost" || url.hostname === "[::1]"
      ? `a local app (${url.host})`
      : url.host || url.protocol;
  } catch {
    return uri;
  }
}

/**
 * A client wherever it is listed (the tokens page's grants): never its self-chosen name alone. A
 * metadata document's client reads as on the consent page (its document's host); a registered
 * one with where its answers go (its redirect host), which consent shows beside its name.
 */
export function listedClientLabel(client: { clientName?: string; redirectUris: string[] } | null, clientId: string): string {
  if (/^https:\/\//i.test(clientId) || !client) return clientLabel(client?.clientName, clientId);
  const redirect = client.redirectUris[0];
  const shown = clientLabel(client.clientName, clientId);
  return redirect === undefined ? shown : `${shown} (redirects to ${redirectHostOf(redirect)})`;
}
