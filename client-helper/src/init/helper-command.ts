/**
 * @module init/helper-command
 * How a project's configuration reaches the helper: the endpoint URLs and the one command
 * line that runs this helper version. Until the helper is on the npm registry, every
 * Waymark endpoint serves its own version-matched tarball at
 * `<origin>/helper/waymark-helper-<version>.tgz`; `helperPackageSpec` is the single place
 * that says so.
 */
import { launcherShellPath } from "../hooks/launcher.js";

export type Endpoint = {
  /** `https://waymark.example.com` */
  origin: string;
  /** The Streamable HTTP MCP endpoint, `<origin>/mcp` unless the URL named another path. */
  mcp: string;
};

/** Reads `--url`: an origin or the MCP endpoint itself. Throws a message naming the rule. */
export function parseEndpoint(url: string): Endpoint {
  if (!URL.canParse(url)) throw new Error(`--url must be an http(s) URL, got ${JSON.stringify(url)}`);
  const parsed = new URL(url);
  if (!/^https?:$/.test(parsed.protocol)) throw new Error(`--url must be an http(s) URL, got ${JSON.stringify(url)}`);
  if (parsed.username || parsed.password || parsed.search || parsed.hash) {
    throw new Error("--url must not carry credentials, a query or a fragment (the token goes in WAYMARK_TOKEN)");
  }
  const path = parsed.pathname.replace(/\/+$/, "");
  return { origin: parsed.origin, mcp: `${parsed.origin}${path === "" ? "/mcp" : path}` };
}

/** The npm package spec of this helper version, served by the endpoint itself. */
export function helperPackageSpec(endpoint: Endpoint, version: string): string {
  return `${endpoint.origin}/helper/waymark-helper-${version}.tgz`;
}

/** The command and arguments that run `waymark <args...>` from that package. */
export function helperCommand(endpoint: Endpoint, version: string, args: readonly string[]): { command: string; args: string[] } {
  return { command: "npx", args: ["-y", `--package=${helperPackageSpec(endpoint, version)}`, "waymark", ...args] };
}

/** The same as one shell command line (hooks take a string); every argument is shell-safe. */
export function helperCommandLine(endpoint: Endpoint, version: string, args: readonly string[]): string {
  const { command, args: all } = helperCommand(endpoint, version, args);
  return [command, ...all].map(shellQuote).join(" ");
}

/**
 * A hook's command line: the launcher a previous hook run left in the cache dir when there
 * is one (fast: no npm start-up), else npx. The hook always exits 0, so the fallback only
 * runs when the launcher is missing or cannot load.
 */
export function hookCommandLine(endpoint: Endpoint, version: string, args: readonly string[]): string {
  const fast = ["node", launcherShellPath(version), ...args.map(shellQuote)].join(" ");
  return `${fast} 2>/dev/null || ${helperCommandLine(endpoint, version, args)}`;
}

function shellQuote(word: string): string {
  return /^[A-Za-z0-9_./:=@%+,-]+$/.test(word) ? word : `'${word.replaceAll("'", `'\\''`)}'`;
}

/** The environment variable the helper reads its token from; configurations only ever reference it. */
export const TOKEN_VARIABLE = "WAYMARK_TOKEN";
