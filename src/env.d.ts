// Secrets and dev-only vars are not in wrangler.toml, so `wrangler types` cannot see them.
interface Env {
  /** "account:token,account:token" — set with `wrangler secret put WAYMARK_TOKENS`. */
  WAYMARK_TOKENS?: string;
  /** Set only by `npm start` (wrangler dev); binds to the account "dev". */
  WAYMARK_DEV_TOKEN?: string;
  /** Key for share-link and session signatures, 32+ bytes; required unless WAYMARK_DEV_TOKEN is set (development derives one). */
  WAYMARK_SHARE_SECRET?: string;
  /**
   * The deployment's Ed25519 signing keys, a JSON array of JWKs: the first (with its private `d`)
   * signs export statements, the rest are retired public keys kept so that old exports verify.
   * Required unless WAYMARK_DEV_TOKEN is set (development derives one). `npm run signing-key` makes one.
   */
  WAYMARK_SIGNING_KEYS?: string;
  /** "true" lets webhooks target private/loopback hosts (local development and tests only). */
  WAYMARK_WEBHOOK_ALLOW_PRIVATE?: string;
  /** Base delay of webhook retries in ms (doubles per attempt); tests shorten it. */
  WAYMARK_WEBHOOK_RETRY_BASE_MS?: string;
  /** How often an MCP subscription's credential is checked again, in ms (LIMITS.SUBSCRIPTION_RECHECK_MS); tests shorten it. */
  WAYMARK_SUBSCRIPTION_RECHECK_MS?: string;
  /** "1" counts what the deployment is billed for and answers GET /meter (src/meter.ts); the benches set it. */
  WAYMARK_METER?: string;
  /** "1" serves every /mcp exchange through the MCP SDK's handler, the lean tools/call path off (src/mcp/lean-call.ts): tests compare the two. */
  WAYMARK_MCP_SDK_ONLY?: string;
}
interface Env {
  /** Extra browser origins allowed to call /mcp, comma separated. */
  WAYMARK_ALLOWED_ORIGINS?: string;
}
interface Env {
  /** Host names this deployment answers to, comma separated (production); development accepts loopback names only. */
  WAYMARK_HOSTNAMES?: string;
}

/** Data modules (wrangler's default rule for *.bin): the helper tarball, src/routes/helper-download.ts. */
declare module "*.bin" {
  const bytes: ArrayBuffer;
  export default bytes;
}
