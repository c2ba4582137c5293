/**
 * @module oauth/client-metadata
 * Client ID Metadata Documents (CIMD): a client_id that is the https URL of a JSON document naming
 * the client and its redirect URIs. The provider library resolves such a client itself, and 1.2.3
 * takes neither a fetch nor a resolver of ours; what it does take is its own cache: before it
 * fetches a document (with the isolate's fetch, 5 KB, 10 s) it looks the URL up in the Cache API
 * cache CIMD_CACHE and uses a document found there (it still validates it).
 *
 * So Waymark fetches the document first, within its own bounds (LIMITS.CLIENT_METADATA_*: https
 * at every hop, public hosts only (domain/network; in production the compatibility flag
 * `global_fetch_strictly_public` also holds every hop to public addresses), at most 3 redirects
 * each checked again, a deadline, the body read up to its bound), and puts it in that cache for the
 * library to read. A document it refuses never reaches the library: the route that named the
 * client answers the refusal itself (routes/oauth: the authorization request, the token
 * endpoint). Nothing else in the isolate is touched: its fetch stays the platform's.
 *
 * Where the Cache API keeps nothing (a workers.dev host), or the library refuses a document
 * Waymark accepted (it evicts it and asks the origin again), the library fetches that URL once
 * more itself, within its own bounds above and the compatibility flag, right after Waymark's
 * bounded fetch of it succeeded.
 *
 * Development only (the dev token is set: `npm start`, the end-to-end tests): a loopback client_id
 * (https://127.0.0.1:PORT/…) is fetched over plain http, since a local client has no certificate
 * the runtime trusts. The provider's whole path (validation, parsing, consent, tokens) still runs.
 */
import { specialPurposeReason } from "../domain/network";
import { readBounded } from "../http/bounded-body";
import { LIMITS } from "../limits";
import { revealBidiControls } from "../pages/format";

/** The Cache API cache @cloudflare/workers-oauth-provider 1.2.3 reads metadata documents from first. */
export const CIMD_CACHE = "workers-oauth-provider:cimd:v1";
/** A seeded document outlives the request that fetched it only briefly: each request that resolves a client fetches it anew. */
const SEED_SECONDS = 60;
const LOOPBACK = new Set(["127.0.0.1", "[::1]", "localhost"]);

/** Whether `clientId` names a metadata document (an https URL), which the provider would fetch. */
export function isMetadataDocumentId(clientId: string): boolean {
  return URL.canParse(clientId) && new URL(clientId).protocol === "https:";
}

/** The URL to fetch for `url` (a loopback one over http in development), or why it may not be fetched. */
function target(url: URL, development: boolean): URL | string {
  if (url.protocol !== "https:") return `${url.href}: only https is fetched`;
  if (development && LOOPBACK.has(url.hostname)) {
    const local = new URL(url.href);
    local.protocol = "http:";
    return local;
  }
  const special = specialPurposeReason(url.hostname);
  return special ? `${url.href}: ${special} hosts are not fetched` : url;
}

/** The document's bytes, fetched within Waymark's bounds, or why it was refused. */
async function fetchBounded(clientId: string, development: boolean): Promise<{ body: Uint8Array } | { refused: string }> {
  const deadline = AbortSignal.timeout(LIMITS.CLIENT_METADATA_FETCH_MS);
  let url = new URL(clientId);
  try {
    for (let hop = 0; hop <= LIMITS.CLIENT_METADATA_REDIRECTS; hop++) {
      const next = target(url, development);
      if (typeof next === "string") return { refused: next };
      const response = await fetch(next, { headers: { Accept: "application/json" }, redirect: "manual", signal: deadline });
      const location = response.headers.get("Location");
      if (response.status >= 300 && response.status < 400 && location) {
        await response.body?.cancel();
        url = new URL(location, url);
        continue;
      }
      if (!response.ok) {
        await response.body?.cancel();
        return { refused: `${url.href}: answered HTTP ${response.status}` };
      }
      const body = await readBounded(response, LIMITS.CLIENT_METADATA_BYTES);
      return body === null ? { refused: `${url.href}: larger than ${LIMITS.CLIENT_METADATA_BYTES} bytes` } : { body };
    }
    return { refused: `${clientId}: more than ${LIMITS.CLIENT_METADATA_REDIRECTS} redirects` };
  } catch (error) {
    return {
      refused: deadline.aborted ? `${url.href}: no answer within ${LIMITS.CLIENT_METADATA_FETCH_MS} ms` : `${url.href}: ${String(error)}`,
    };
  }
}

/** Puts `body` where the provider looks first, for `clientId`; false when this runtime keeps nothing there. */
export async function seedClientMetadata(clientId: string, body: Uint8Array): Promise<boolean> {
  if (typeof caches === "undefined") return false;
  try {
    const cache = await caches.open(CIMD_CACHE);
    const headers = { "Content-Type": "application/json", "Cache-Control": `public, max-age=${SEED_SECONDS}` };
    await cache.put(clientId, new Response(body, { status: 200, headers }));
    return true;
  } catch (error) {
    console.warn(`client metadata document not cached for the provider: ${String(error)}`);
    return false;
  }
}

/**
 * Before the provider resolves `clientId`: a metadata document's URL is fetched within Waymark's
 * bounds and handed to the provider through its cache. Null when the provider may go on (also
 * for a client_id that is no URL: a registered client), else why the document was refused.
 */
export async function prepareClientMetadata(
  clientId: string | null | undefined,
  env: Pick<Env, "WAYMARK_DEV_TOKEN">,
): Promise<string | null> {
  if (!clientId || !isMetadataDocumentId(clientId)) return null;
  const fetched = await fetchBounded(clientId, Boolean(env.WAYMARK_DEV_TOKEN));
  if ("refused" in fetched) {
    console.warn(`client metadata document refused: ${fetched.refused}`);
    return fetched.refused;
  }
  await seedClientMetadata(clientId, fetched.body);
  return null;
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
