/**
 * @module http/origins
 * Which hosts and browser origins this deployment answers, against DNS rebinding and
 * cross-site requests. A rebinding page is served from the attacker's name resolved to
 * 127.0.0.1, so its requests carry `Host: attacker.example:8787`: only names this
 * deployment is configured with pass. Origins are compared with the configured ones,
 * never with an origin derived from the request's own Host.
 *
 *   development (`npm start`, WAYMARK_DEV_TOKEN set): localhost, 127.0.0.1, [::1] on any
 *     port, plus WAYMARK_HOSTNAMES;
 *   production: exactly WAYMARK_HOSTNAMES (required), origins https://<each name>;
 *   both: WAYMARK_ALLOWED_ORIGINS adds browser origins (an MCP web client elsewhere).
 */
const LOOPBACK_NAMES = ["localhost", "127.0.0.1", "[::1]"];
const LOOPBACK_ORIGIN = /^http:\/\/(localhost|127\.0\.0\.1|\[::1\])(:\d{1,5})?$/;

export type OriginEnv = Pick<Env, "WAYMARK_DEV_TOKEN" | "WAYMARK_HOSTNAMES" | "WAYMARK_ALLOWED_ORIGINS">;

/** `npm start` is the only place that sets a dev token; a deployment never has one. */
export function isDevelopment(env: Pick<Env, "WAYMARK_DEV_TOKEN">): boolean {
  return Boolean(env.WAYMARK_DEV_TOKEN);
}

/** Every request checks its Host and Origin against these lists; each variable is split once per value. */
const parsedLists = new Map<string, string[]>();

function listed(value: string | undefined): string[] {
  const source = value ?? "";
  let items = parsedLists.get(source);
  if (!items) {
    items = source
      .split(",")
      .map((item) => item.trim().toLowerCase())
      .filter(Boolean);
    // Two variables exist; the bound only matters if they change at run time.
    if (parsedLists.size >= 8) parsedLists.clear();
    parsedLists.set(source, items);
  }
  return items;
}

export function configuredHostnames(env: OriginEnv): string[] {
  return listed(env.WAYMARK_HOSTNAMES);
}

/** Why the host configuration cannot serve, or null. */
export function hostnamesProblem(env: OriginEnv): string | null {
  if (isDevelopment(env) || configuredHostnames(env).length > 0) return null;
  return "WAYMARK_HOSTNAMES is not set: list the host names this deployment serves (e.g. waymark.example.com,waymark.acme.workers.dev)";
}

/** Host header → host name: parsing a URL on every request cost more than the rest of the guard. */
const parsedHosts = new Map<string, string | null>();

/** The host name of a Host header ("name:port", "[v6]:port"), lower-cased; null when it is not one. */
export function hostnameOf(hostHeader: string | null): string | null {
  if (!hostHeader || /[\s/\\?#@]/.test(hostHeader)) return null;
  const known = parsedHosts.get(hostHeader);
  if (known !== undefined) return known;
  let name: string | null;
  try {
    // No trailing-dot folding: "localhost." is not "localhost".
    name = new URL(`http://${hostHeader}`).hostname;
  } catch {
    name = null;
  }
  // A deployment sees a few Host values; anyone can send others, so the memo is bounded.
  if (parsedHosts.size >= 64) parsedHosts.clear();
  parsedHosts.set(hostHeader, name);
  return name;
}

export function hostAllowed(env: OriginEnv, hostHeader: string | null): boolean {
  const name = hostnameOf(hostHeader);
  if (name === null) return false;
  if (configuredHostnames(env).includes(name)) return true;
  return isDevelopment(env) && LOOPBACK_NAMES.includes(name);
}

/** Whether a browser origin may act on this deployment (forms, WebSockets, API calls from pages). */
export function originAllowed(env: OriginEnv, origin: string): boolean {
  const normalized = origin.toLowerCase();
  if (listed(env.WAYMARK_ALLOWED_ORIGINS).includes(normalized)) return true;
  if (configuredHostnames(env).some((name) => normalized === `https://${name}`)) return true;
  return isDevelopment(env) && LOOPBACK_ORIGIN.test(normalized);
}
