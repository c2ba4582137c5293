/**
 * The session's opening answered from the last one's (src/proxy/opening.ts), through the real
 * `waymark mcp` process and real SDK clients (v2 on the 2025 handshake, v2 pinned to 2026-07-28,
 * v2 negotiating, v1): a second session gets its handshake and lists while the endpoint has
 * answered nothing (its requests held), exactly as the first got them, and every call still works
 * once it answers; a list that changed since is corrected by a list_changed notification and kept
 * anew; the token is never written, and another token's session is not answered from it.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import { Client as V1Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport as V1StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { afterAll, beforeAll, expect, it } from "vitest";
import { cleanupTempDirs, tempDir } from "./fixtures.js";
import { BIN, ensureBuilt, FakeRemote, SYSTEM_NODE } from "./support.js";

const TOKEN = "opening-token";
let remote: FakeRemote;

beforeAll(async () => {
  ensureBuilt();
  remote = new FakeRemote(TOKEN);
  await remote.start();
});
afterAll(async () => {
  await remote.stop();
  cleanupTempDirs();
});

type Negotiation = ConstructorParameters<typeof Client>[1];
type AnyClient = Pick<Client, "listTools" | "listResources" | "callTool" | "close">;

/** `waymark mcp` as an agent starts it, with its cache in `cache`. */
function helperProcess(cache: string, token = TOKEN) {
  const env: Record<string, string> = {};
  for (const [key, value] of Object.entries(process.env)) if (value !== undefined && !key.startsWith("WAYMARK_")) env[key] = value;
  return {
    command: SYSTEM_NODE,
    args: [BIN, "mcp", "--url", remote.url],
    env: { ...env, WAYMARK_TOKEN: token, XDG_CACHE_HOME: cache },
    stderr: "pipe" as const,
  };
}

const CLIENTS: [string, (cache: string, token?: string) => Promise<AnyClient & { notified: string[] }>][] = [
  ...(
    [
      ["SDK v2, the 2025 handshake", {}],
      ["SDK v2 pinned to 2026-07-28", { versionNegotiation: { mode: { pin: "2026-07-28" } } }],
      ["SDK v2 negotiating", { versionNegotiation: { mode: "auto" } }],
    ] as [string, Negotiation][]
  ).map(
    ([label, options]) =>
      [
        label,
        async (cache: string, token?: string) => {
          const client = new Client({ name: "opening-client", version: "1.0.0" }, options);
          const notified: string[] = [];
          client.setNotificationHandler("notifications/tools/list_changed", () => {
            notified.push("tools");
          });
          await client.connect(new StdioClientTransport(helperProcess(cache, token)));
          return Object.assign(client, { notified });
        },
      ] as [string, (cache: string, token?: string) => Promise<AnyClient & { notified: string[] }>],
  ),
  [
    "SDK v1",
    async (cache: string, token?: string) => {
      const client = new V1Client({ name: "opening-client-v1", version: "1.0.0" });
      await client.connect(new V1StdioClientTransport(helperProcess(cache, token)));
      return Object.assign(client as unknown as AnyClient, { notified: [] as string[] });
    },
  ],
];

/** Holds every request the endpoint receives until the returned function is called. */
function hold(): () => void {
  let release: () => void = () => {};
  remote.held = new Promise<void>((resolve) => {
    release = resolve;
  });
  return () => {
    remote.held = null;
    release();
  };
}

it.each(CLIENTS)(
  "%s: the second session's opening is answered before the endpoint answers anything, as the first was",
  async (_label, open) => {
    const cache = tempDir("opening-cache-");
    const first = await open(cache);
    const tools = await first.listTools();
    const resources = await first.listResources();
    await first.close();

    const release = hold();
    const answeredBefore = remote.requests;
    let second: (AnyClient & { notified: string[] }) | null = null;
    try {
      second = await open(cache);
      // The handshake and the lists, with the endpoint holding every request it got.
      expect(await second.listTools()).toEqual(tools);
      expect(await second.listResources()).toEqual(resources);
    } finally {
      release();
    }
    expect(remote.requests).toBeGreaterThanOrEqual(answeredBefore);
    // Once the endpoint answers, the session works as any other.
    const started = await second.callTool({ name: "start_task", arguments: { workflow_id: "wf", name: "t", goal: "g" } });
    expect(started.isError).toBeFalsy();
    expect(second.notified).toEqual([]);
    await second.close();
  },
);

it("a list that changed since the last session is corrected: the client is told, lists again, and the next session keeps the new one", async () => {
  const cache = tempDir("opening-stale-");
  const open = CLIENTS[0]?.[1] as (cache: string) => Promise<AnyClient & { notified: string[] }>;
  const first = await open(cache);
  await first.listTools();
  await first.close();
  remote.startTaskDescription = "Start a task (described anew)";
  try {
    const second = await open(cache);
    // The kept list at once, then the notification that it changed.
    const kept = await second.listTools();
    expect(kept.tools.find((tool) => tool.name === "start_task")?.description).toBe("Start a new task");
    await expect.poll(() => second.notified, { timeout: 10_000 }).toEqual(["tools"]);
    const fresh = await second.listTools();
    expect(fresh.tools.find((tool) => tool.name === "start_task")?.description).toBe("Start a task (described anew)");
    await second.close();
    const release = hold();
    try {
      const third = await open(cache);
      expect((await third.listTools()).tools.find((tool) => tool.name === "start_task")?.description).toBe("Start a task (described anew)");
      await third.close();
    } finally {
      release();
    }
  } finally {
    remote.startTaskDescription = "Start a new task";
  }
});

it("keeps no token, and a session with another token is not answered from another's opening", async () => {
  const cache = tempDir("opening-token-");
  const open = CLIENTS[0]?.[1] as (cache: string, token?: string) => Promise<AnyClient & { notified: string[] }>;
  const first = await open(cache);
  await first.listTools();
  await first.close();
  const folder = join(cache, "waymark", "openings");
  const files = readdirSync(folder);
  expect(files).toHaveLength(1);
  expect(readFileSync(join(folder, files[0] as string), "utf8")).not.toContain(TOKEN);
  // Another token (refused by this endpoint): nothing kept answers it, so the endpoint's refusal reaches the client.
  const other = await open(cache, "another-token");
  await expect(other.listTools()).rejects.toThrow(/UNAUTHORIZED|401/);
  await other.close();
  expect(readdirSync(folder)).toEqual(files);
});
