/**
 * `npm start -- --port N` (scripts/start.sh, as npm runs it): what it prints is the address that
 * answers. The helper command, the dashboard and the plugin marketplace it names are fetched at
 * the printed addresses, on the port chosen, from the real wrangler dev it starts. The
 * development token and the signing private key are in no command line of its processes (any
 * local user reads those with `ps`), yet the server uses both. Nothing it prints is a stack trace
 * (offline, wrangler's fetch of the `Request.cf` sample printed two, until start.sh turned it off).
 */
import { type ChildProcess, spawn } from "node:child_process";
import { readdirSync, readFileSync, statSync } from "node:fs";
import { delimiter, join, resolve } from "node:path";
import { afterAll, expect, it } from "vitest";
import { cleanupTempDirs, tempDir } from "../../client-helper/test/fixtures.js";
import { freePort } from "../support/dev-server.js";

const ROOT = resolve(import.meta.dirname, "../..");
let child: ChildProcess | null = null;

afterAll(() => {
  // Its own process group: sh, wrangler and workerd end together.
  if (child?.pid !== undefined) {
    try {
      process.kill(-child.pid, "SIGKILL");
    } catch {
      // Already gone.
    }
  }
  cleanupTempDirs();
});

/** A line of a JavaScript stack trace, as Node prints one: "    at fn (file:1:2)". */
const STACK_FRAME = /^\s+at .+:\d+:\d+\)?$/m;

/** The first URL on a printed line that starts with `label`. */
function printed(output: string, label: string): string | undefined {
  const line = output.split("\n").find((text) => text.trimStart().startsWith(label));
  return line ? /https?:\/\/[^\s)]+/.exec(line)?.[0] : undefined;
}

/** The command lines of every process in a process group (sh, wrangler, workerd), as `ps` shows them. */
function groupCommandLines(group: number): string[] {
  const lines: string[] = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
      if (Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[2]) !== group) continue;
      lines.push(readFileSync(`/proc/${entry}/cmdline`, "utf8").replaceAll("\0", " "));
    } catch {
      // The process ended while we looked.
    }
  }
  return lines;
}

it("npm start -- --port N prints the helper, dashboard and plugin addresses on that port, and they answer", async () => {
  const port = await freePort();
  const stateDir = tempDir("waymark-start-");
  // A `$` as wrangler's .env files would expand it: the token must arrive as written.
  const token = "start-script-$HOME-token-0123456789";
  let output = "";
  child = spawn("sh", [join(ROOT, "scripts", "start.sh"), "--port", String(port), "--inspector-port", String(await freePort())], {
    cwd: ROOT,
    detached: true,
    stdio: ["ignore", "pipe", "pipe"],
    env: {
      // As a user's shell starts it: vitest's NODE_ENV=test would make wrangler skip what it does at a real start.
      ...Object.fromEntries(Object.entries(process.env).filter(([name]) => name !== "NODE_ENV")),
      PATH: `${join(ROOT, "node_modules", ".bin")}${delimiter}${process.env.PATH ?? ""}`,
      WAYMARK_STATE_DIR: stateDir,
      WAYMARK_DEV_TOKEN: token,
      CI: "true",
      NO_COLOR: "1",
    },
  });
  child.stdout?.on("data", (chunk) => (output += chunk));
  child.stderr?.on("data", (chunk) => (output += chunk));
  const origin = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 90_000;
  for (;;) {
    const up = await fetch(`${origin}/health`).then(
      (response) => response.ok,
      () => false,
    );
    if (up) break;
    expect(Date.now() < deadline, `npm start did not answer on ${origin}:\n${output}`).toBe(true);
    await new Promise((r) => setTimeout(r, 300));
  }
  expect(printed(output, "helper")).toBe(`${origin}/helper/latest`);
  expect(printed(output, "agents:")?.startsWith(origin)).toBe(true);
  expect(output).not.toContain("8787");
  expect(output).not.toMatch(STACK_FRAME);
  const helper = await fetch(printed(output, "helper") as string, { redirect: "manual" });
  expect(helper.status).toBe(302);
  const plugins = printed(output, "plugins") as string;
  expect(plugins).toBe(`${origin}/plugins/waymark.git`);
  expect((await fetch(`${plugins}/info/refs?service=git-upload-pack`)).status).toBe(200);

  // The secrets are in no process's command line…
  const keys = JSON.parse(readFileSync(join(stateDir, "signing-keys.json"), "utf8")) as { x: string; d: string }[];
  const privateKey = keys[0]?.d as string;
  const commandLines = groupCommandLines(child.pid as number);
  expect(commandLines.some((line) => line.includes("wrangler") && line.includes("dev"))).toBe(true);
  expect(commandLines.some((line) => line.includes("workerd"))).toBe(true);
  for (const line of commandLines) {
    expect(line).not.toContain(token);
    expect(line).not.toContain(privateKey);
  }
  // …they are in a file only the user can read…
  expect(statSync(join(stateDir, "dev-secrets.env")).mode & 0o777).toBe(0o600);
  // …and the server uses both: the token as written signs in, the key signs statements.
  const authorized = (bearer: string) =>
    fetch(`${origin}/api/workflows`, { headers: { Authorization: `Bearer ${bearer}` } }).then((response) => response.status);
  expect(await authorized(token)).toBe(200);
  expect(await authorized("start-script--token-0123456789")).toBe(401);
  const published = (await (await fetch(`${origin}/.well-known/waymark-signing-keys.json`)).json()) as unknown;
  expect(JSON.stringify(published)).toContain(keys[0]?.x as string);
}, 120_000);
