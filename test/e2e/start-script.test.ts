/**
 * `npm start -- --port N` (scripts/start.sh, as npm runs it): what it prints is the address that
 * answers. The helper command, the dashboard and the plugin marketplace it names are fetched at
 * the printed addresses, on the port chosen, from the real wrangler dev it starts.
 */
import { type ChildProcess, spawn } from "node:child_process";
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

/** The first URL on a printed line that starts with `label`. */
function printed(output: string, label: string): string | undefined {
  const line = output.split("\n").find((text) => text.trimStart().startsWith(label));
  return line ? /https?:\/\/[^\s)]+/.exec(line)?.[0] : undefined;
}

it("npm start -- --port N prints the helper, dashboard and plugin addresses on that port, and they answer", async () => {
  const port = await freePort();
  let output = "";
  child = spawn("sh", [join(ROOT, "scripts", "start.sh"), "--port", String(port), "--inspector-port", String(await freePort())], {
    cwd: ROOT,
    detached: true,
    stdio: ["ignore", "pipe", "pipe"],
    env: {
      ...process.env,
      PATH: `${join(ROOT, "node_modules", ".bin")}${delimiter}${process.env.PATH ?? ""}`,
      WAYMARK_STATE_DIR: tempDir("waymark-start-"),
      WAYMARK_DEV_TOKEN: "start-script-test-token-0123456789",
      CLOUDFLARE_CF_FETCH_ENABLED: "false",
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
  const helper = await fetch(printed(output, "helper") as string, { redirect: "manual" });
  expect(helper.status).toBe(302);
  const plugins = printed(output, "plugins") as string;
  expect(plugins).toBe(`${origin}/plugins/waymark.git`);
  expect((await fetch(`${plugins}/info/refs?service=git-upload-pack`)).status).toBe(200);
}, 120_000);
