/**
 * @module endpoint
 * Which Waymark endpoint a command talks to, and so where the token may go: `--url`, else
 * WAYMARK_URL, else the user-level config `waymark init` writes and shows
 * ($XDG_CONFIG_HOME/waymark/config.json, else ~/.config/waymark/config.json). Never an endpoint
 * read from a repository's files: a cloned repository could name any server. Every command
 * accepts the base URL or the MCP endpoint itself (`https://host` and `https://host/mcp` are one
 * endpoint).
 */
import { randomUUID } from "node:crypto";
import { mkdir, readFile, rename, writeFile } from "node:fs/promises";
import { homedir } from "node:os";
import { dirname, join } from "node:path";

export type Endpoint = {
  /** `https://waymark.example.com` */
  origin: string;
  /** The Streamable HTTP MCP endpoint, `<origin>/mcp` unless the URL named another path. */
  mcp: string;
};

/** A URL that cannot be an endpoint; the message names where it came from and the rule. */
export class EndpointError extends Error {}

/** Reads an endpoint URL (`source` names it in errors: "--url", "WAYMARK_URL", a file). */
export function parseEndpoint(url: string, source = "--url"): Endpoint {
  const rule = `${source} must be an http(s) URL`;
  if (!URL.canParse(url)) throw new EndpointError(`${rule}, got ${JSON.stringify(url)}`);
  const parsed = new URL(url);
  if (!/^https?:$/.test(parsed.protocol)) throw new EndpointError(`${rule}, got ${JSON.stringify(url)}`);
  if (parsed.username || parsed.password || parsed.search || parsed.hash) {
    throw new EndpointError(`${source} must not carry credentials, a query or a fragment (the token goes in WAYMARK_TOKEN)`);
  }
  const path = parsed.pathname.replace(/\/+$/, "");
  return { origin: parsed.origin, mcp: `${parsed.origin}${path === "" ? "/mcp" : path}` };
}

export function userConfigPath(env: NodeJS.ProcessEnv = process.env): string {
  const home = env.HOME && env.HOME !== "" ? env.HOME : homedir();
  const base = env.XDG_CONFIG_HOME && env.XDG_CONFIG_HOME !== "" ? env.XDG_CONFIG_HOME : join(home, ".config");
  return join(base, "waymark", "config.json");
}

type UserConfig = { endpoint?: unknown };

async function readUserConfig(path: string): Promise<UserConfig> {
  let text: string;
  try {
    text = await readFile(path, "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return {};
    throw new EndpointError(`cannot read ${path}: ${(error as Error).message}`);
  }
  try {
    const value: unknown = JSON.parse(text);
    if (value && typeof value === "object" && !Array.isArray(value)) return value as UserConfig;
  } catch {
    // reported below
  }
  throw new EndpointError(`${path} is not a JSON object; run waymark init --url <endpoint> to write it again`);
}

/** The endpoint the user-level config names, or null when there is none. */
export async function userEndpoint(env: NodeJS.ProcessEnv = process.env): Promise<Endpoint | null> {
  const path = userConfigPath(env);
  const { endpoint } = await readUserConfig(path);
  if (endpoint === undefined) return null;
  if (typeof endpoint !== "string") throw new EndpointError(`${path}: "endpoint" must be a string`);
  return parseEndpoint(endpoint, path);
}

/** Keeps the endpoint in the user-level config (no token is ever written); returns the file's path. */
export async function saveUserEndpoint(endpoint: Endpoint, env: NodeJS.ProcessEnv = process.env): Promise<string> {
  const path = userConfigPath(env);
  const config = await readUserConfig(path);
  await mkdir(dirname(path), { recursive: true, mode: 0o700 });
  const temp = `${path}.${process.pid}.${randomUUID()}.tmp`;
  await writeFile(temp, `${JSON.stringify({ ...config, endpoint: endpoint.mcp }, null, 2)}\n`, { mode: 0o600 });
  await rename(temp, path);
  return path;
}

export type ResolvedEndpoint = { endpoint: Endpoint; source: string };

/** --url, else WAYMARK_URL, else the user-level config; null when none names an endpoint. */
export async function resolveEndpoint(flag: string | undefined, env: NodeJS.ProcessEnv = process.env): Promise<ResolvedEndpoint | null> {
  if (flag !== undefined) return { endpoint: parseEndpoint(flag, "--url"), source: "--url" };
  if (env.WAYMARK_URL) return { endpoint: parseEndpoint(env.WAYMARK_URL, "WAYMARK_URL"), source: "WAYMARK_URL" };
  const saved = await userEndpoint(env);
  return saved ? { endpoint: saved, source: userConfigPath(env) } : null;
}

/** What to do when no endpoint is configured. */
export function noEndpointHelp(env: NodeJS.ProcessEnv = process.env): string {
  return `no endpoint: pass --url <endpoint>, set WAYMARK_URL, or run waymark init --url <endpoint> (it keeps the endpoint in ${userConfigPath(env)})`;
}
