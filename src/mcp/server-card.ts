/**
 * @module server-card — the MCP server card (SEP-2127, draft): what a hosted client learns about
 * this deployment before it connects, at `/.well-known/mcp/server-card.json` (and the SEP's
 * `/.well-known/mcp/server-card`). Built from the same definitions as tools/list and prompts/list
 * (test/mcp/server-card.test.ts checks that they agree), so it can never describe other tools.
 * Public: it says what the server offers, never anything of an account.
 */
import { Hono } from "hono";
import type { AppEnv } from "../http/types";
import { APP_MIME_TYPE, APP_URI } from "./app";
import { PROMPTS } from "./prompts";
import { PROTOCOL_VERSIONS, SERVER_INFO_URI } from "./resources";
import { CAPABILITIES, SERVER_INFO, TOOLS } from "./server";

const SCHEMA = "https://static.modelcontextprotocol.io/schemas/v1/server-card.schema.json";

/** A tool as tools/list shows it: the advertised JSON Schemas of its definition. */
function listedTool(tool: (typeof TOOLS)[number]) {
  const { description, inputSchema, outputSchema, annotations, _meta } = tool.config;
  const json = (schema: typeof inputSchema) => schema["~standard"].jsonSchema.input({ target: "draft-2020-12" });
  return {
    name: tool.name,
    description,
    inputSchema: json(inputSchema),
    outputSchema: json(outputSchema),
    annotations,
    ...(_meta ? { _meta } : {}),
  };
}

/** Computed once per isolate; only the deployment's own URLs differ per origin. */
const TOOL_CARDS = TOOLS.map(listedTool);

/** The server's name in reverse-DNS form, from the host it answers on (`waymark.example.com` → `com.example.waymark/waymark`). */
function reverseDnsName(host: string): string {
  const labels = host.split(":")[0]?.split(".").reverse().join(".") ?? "localhost";
  return `${labels}/${SERVER_INFO.name}`;
}

export function serverCard(origin: string) {
  return {
    $schema: SCHEMA,
    name: reverseDnsName(new URL(origin).host),
    version: SERVER_INFO.version,
    title: "Waymark",
    description: "An honest record of what coding agents do: workflows, tasks, decisions and the files each task changed, for review.",
    websiteUrl: origin,
    remotes: [
      {
        type: "streamable-http",
        url: `${origin}/mcp`,
        supportedProtocolVersions: PROTOCOL_VERSIONS,
        authentication: { required: true, schemes: ["bearer", "oauth2"] },
      },
    ],
    capabilities: CAPABILITIES,
    tools: TOOL_CARDS,
    prompts: PROMPTS,
    resources: [
      { uri: SERVER_INFO_URI, name: "server-info", title: "Waymark server info", mimeType: "application/json" },
      { uri: APP_URI, name: "review-app", title: "Waymark review", mimeType: APP_MIME_TYPE },
    ],
  };
}

export const serverCardRoutes = new Hono<AppEnv>();

for (const path of ["/.well-known/mcp/server-card.json", "/.well-known/mcp/server-card"]) {
  serverCardRoutes.get(path, (c) => c.json(serverCard(new URL(c.req.url).origin), 200, { "Cache-Control": "public, max-age=300" }));
}
