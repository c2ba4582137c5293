import { execFileSync, spawnSync } from "node:child_process";
import { readdirSync } from "node:fs";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { cleanupTempDirs, Repo, tempDir } from "./fixtures.js";
import { FakeRemote, HELPER_DIR, SYSTEM_NODE } from "./support.js";

// The published artifact, installed and run the way users get it: the machine's own
// npm and Node (20), not the Node 22 that the repository's npm scripts put on PATH.
const SYSTEM_PATH = ["/usr/local/bin", "/usr/bin", "/bin", ...(process.env.PATH ?? "").split(":")].join(":");
const systemEnv = { ...process.env, PATH: SYSTEM_PATH };
const npmOnSystemNode = (args: string[], cwd: string) =>
  execFileSync("npm", args, { cwd, env: systemEnv, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] });

let packDir: string;
let tarball: string;

beforeAll(() => {
  packDir = tempDir("waymark-pack-");
  // --ignore-scripts: `prepare` would rebuild dist/ in place while test files running beside this
  // one execute it (a half-written bin.js runs as an empty program). The global setup built dist/
  // from the same sources, so the tarball is the one `npm publish` would make.
  npmOnSystemNode(["pack", "--ignore-scripts", "--pack-destination", packDir], HELPER_DIR);
  const file = readdirSync(packDir).find((f) => f.endsWith(".tgz"));
  if (!file) throw new Error("npm pack produced no tarball");
  tarball = join(packDir, file);
}, 120_000);
afterAll(cleanupTempDirs);

describe("npm pack of client-helper", () => {
  it("ships compiled JS and the README, no sources or tests", () => {
    const files = execFileSync("tar", ["tzf", tarball], { encoding: "utf8" }).trim().split("\n").sort();
    expect(files).toContain("package/dist/bin.js");
    expect(files).toContain("package/README.md");
    expect(files.filter((f) => f.endsWith(".ts") || f.includes("/test/"))).toEqual([]);
  });

  it("bundles the shared contract: no dependency on the workspace package", () => {
    const manifest = JSON.parse(execFileSync("tar", ["xzOf", tarball, "package/package.json"], { encoding: "utf8" })) as {
      dependencies?: Record<string, string>;
    };
    expect(Object.keys(manifest.dependencies ?? {}).sort()).toEqual(["@modelcontextprotocol/client", "@modelcontextprotocol/server"]);
    // The bin and the chunks its commands load lazily: all of the shipped code.
    const shipped = execFileSync("tar", ["tzf", tarball], { encoding: "utf8" })
      .trim()
      .split("\n")
      .filter((file) => file.startsWith("package/dist/") && file.endsWith(".js"));
    expect(shipped).toContain("package/dist/bin.js");
    const code = shipped.map((file) => execFileSync("tar", ["xzOf", tarball, file], { encoding: "utf8" })).join("\n");
    expect(code).not.toContain("@waymark/protocol");
    // zod is not a dependency: no shipped module may load it.
    expect(code).not.toMatch(/(from|import\()\s*["']zod["']/);
    expect(code).toContain("ESCAPED_PATH_PREFIX");
  });

  it("npx -y ./<tarball> --help runs on the machine's Node", () => {
    expect(execFileSync(SYSTEM_NODE, ["--version"], { encoding: "utf8" })).toMatch(/^v(2\d|[3-9]\d)\./);
    const r = spawnSync("npx", ["-y", `./${tarball.split("/").pop()}`, "--help"], {
      cwd: packDir,
      env: systemEnv,
      encoding: "utf8",
    });
    expect(r.status).toBe(0);
    expect(r.stdout).toContain("Exit codes:");
  }, 120_000);

  it("installed into a prefix, its waymark bin serves MCP on the machine's Node", async () => {
    const prefix = tempDir("waymark-prefix-");
    npmOnSystemNode(["install", "--prefix", prefix, "--no-audit", "--no-fund", tarball], packDir);
    const bin = join(prefix, "node_modules", ".bin", "waymark");
    expect(spawnSync(SYSTEM_NODE, [bin, "--version"], { encoding: "utf8" }).status).toBe(0);

    const remote = new FakeRemote("t");
    await remote.start();
    const client = new Client({ name: "pack-test", version: "1.0.0" });
    try {
      await client.connect(
        new StdioClientTransport({
          command: SYSTEM_NODE,
          args: [bin, "mcp", "--url", remote.url, "--dir", Repo.init().dir],
          env: { PATH: SYSTEM_PATH, WAYMARK_TOKEN: "t", XDG_CACHE_HOME: tempDir() },
          stderr: "pipe",
        }),
      );
      const { tools } = await client.listTools();
      expect(tools.map((t) => t.name).sort()).toEqual(["complete_task", "log_milestone", "start_task"]);
    } finally {
      await client.close();
      await remote.stop();
    }
  }, 120_000);
});
