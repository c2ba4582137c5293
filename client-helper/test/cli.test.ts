import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { readdirSync, readFileSync, utimesSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { cleanupTempDirs, Repo, tempDir } from "./fixtures.js";
import { BIN, ensureBuilt, HELPER_DIR, REPO_ROOT, SYSTEM_NODE } from "./support.js";

beforeAll(ensureBuilt);
afterAll(cleanupTempDirs);

const VERSION = (JSON.parse(readFileSync(join(HELPER_DIR, "package.json"), "utf8")) as { version: string }).version;

/** Where the helper keeps its cache and reads its user config during these tests (never the user's). */
let cacheHome = "";
let configHome = "";
beforeAll(() => {
  cacheHome = tempDir("waymark-cli-cache-");
  configHome = tempDir("waymark-cli-config-");
});

/** The built bin on the machine's Node, as a user or a CI script runs it. */
function waymark(args: string[], opts: { cwd?: string; input?: string } = {}) {
  const env: NodeJS.ProcessEnv = { ...process.env, XDG_CACHE_HOME: cacheHome, XDG_CONFIG_HOME: configHome };
  delete env.WAYMARK_URL;
  delete env.WAYMARK_TOKEN;
  const r = spawnSync(SYSTEM_NODE, [BIN, ...args], { cwd: opts.cwd, input: opts.input, encoding: "utf8", env });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

describe("waymark CLI contract: help text and exit codes", () => {
  it("--help documents every command and the exit codes, exit 0", () => {
    const r = waymark(["--help"]);
    expect(r.code).toBe(0);
    for (const text of ["waymark mcp [--url", "waymark snapshot", "waymark changes --since", "Exit codes:", "0  success"]) {
      expect(r.stdout).toContain(text);
    }
    expect(r.stdout).toContain("1  runtime failure");
    expect(r.stdout).toContain("2  usage error");
  });

  it("--version prints the package version, exit 0", () => {
    expect(waymark(["--version"])).toEqual({ code: 0, stdout: `${VERSION}\n`, stderr: "" });
  });

  it.each([
    ["mcp", "--timeout <seconds>"],
    ["snapshot", "--dir <dir>"],
    ["changes", "--since <file | ->"],
  ])("%s --help, exit 0", (command, option) => {
    const r = waymark([command, "--help"]);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain(`Usage: waymark ${command}`);
    expect(r.stdout).toContain(option);
    expect(r.stdout).toContain("Exit codes:");
  });

  it.each([
    [[], /Usage:/],
    [["frobnicate"], /unknown command "frobnicate"/],
    [["snapshot", "--bogus"], /Unknown option '--bogus'/],
    [["snapshot", "extra"], /positional/],
    [["changes"], /--since is required/],
    [["changes", "--since", "/nonexistent/snap.json"], /cannot read --since/],
    [["mcp"], /no endpoint: pass --url <endpoint>, set WAYMARK_URL, or run waymark init --url <endpoint>/],
    [["mcp", "--url", "ftp://x"], /--url must be an http\(s\) URL/],
    [["mcp", "--url", "http://127.0.0.1:9/mcp", "--timeout", "soon"], /--timeout must be a positive number/],
  ])("usage error %j -> exit 2 with a message on stderr", (args, message) => {
    const r = waymark(args as string[]);
    expect(r.code).toBe(2);
    expect(r.stdout).toBe("");
    expect(r.stderr).toMatch(message);
  });

  it("an invalid snapshot file -> exit 2; a runtime failure -> exit 1", () => {
    const dir = tempDir();
    writeFileSync(join(dir, "bad.json"), '{"type":"git"}');
    expect(waymark(["changes", "--since", join(dir, "bad.json")]).code).toBe(2);
    writeFileSync(join(dir, "notjson.json"), "nope");
    expect(waymark(["changes", "--since", join(dir, "notjson.json")]).code).toBe(2);
    const r = waymark(["snapshot", "--dir", join(dir, "missing")]);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/^waymark: .*missing/);
  });

  it("snapshot then changes --since <file> and --since - give the changes and the resolved list", () => {
    const repo = Repo.init().write("a.txt", "a\n").write("b.txt", "b\n").commitAll("base");
    const snap = waymark(["snapshot"], { cwd: repo.dir });
    expect(snap.code).toBe(0);
    const snapshot = JSON.parse(snap.stdout) as { type: string; head: string };
    expect(snapshot).toMatchObject({ type: "git", root: repo.dir, branch: "main", dirty: [] });
    const file = join(tempDir(), "snap.json");
    writeFileSync(file, snap.stdout);
    repo.write("a.txt", "a2\n").write("new name.txt", "n\n").remove("b.txt");
    for (const r of [waymark(["changes", "--since", file]), waymark(["changes", "--since", "-"], { input: snap.stdout })]) {
      expect(r.code).toBe(0);
      const out = JSON.parse(r.stdout) as { changes: { type: string; start_head: string }; resolved: Record<string, unknown> };
      expect(out.changes).toMatchObject({ type: "git", start_head: snapshot.head, committed: [] });
      expect(out.resolved).toMatchObject({ added: ["new name.txt"], modified: ["a.txt"], deleted: ["b.txt"], renamed: [] });
      expect(out.resolved.files).toEqual([
        { path: "a.txt", status: "M", committed: false },
        { path: "b.txt", status: "D", committed: false },
        { path: "new name.txt", status: "A", committed: false },
      ]);
    }
  });

  it("outside git the snapshot keeps the local checksum list so changes can compare", () => {
    const dir = tempDir();
    writeFileSync(join(dir, "x.txt"), "x\n");
    const snap = waymark(["snapshot", "--dir", dir]);
    expect(snap.code).toBe(0);
    expect(JSON.parse(snap.stdout)).toMatchObject({ type: "checksum", files: 1, root: dir, entries: { "x.txt": {} } });
    writeFileSync(join(dir, "x.txt"), "y\n");
    const r = waymark(["changes", "--since", "-"], { input: snap.stdout });
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout).resolved.modified).toEqual(["x.txt"]);
  });

  it("a second snapshot outside git re-hashes only files whose stat data moved, and sees every edit", () => {
    const dir = tempDir();
    const kept = join(dir, "kept.txt");
    const edited = join(dir, "edited.txt");
    writeFileSync(kept, "kept\n");
    writeFileSync(edited, "aaaa\n");
    // Older than the racy window, so that the next scan may trust their stat data.
    const past = new Date(Date.now() - 60_000);
    utimesSync(kept, past, past);
    utimesSync(edited, past, past);
    const first = JSON.parse(waymark(["snapshot", "--dir", dir]).stdout);
    // The cache is used: a blob planted there for the untouched file comes back as it is.
    const [cacheFile] = readdirSync(join(cacheHome, "waymark", "scans"))
      .filter((name) => name.endsWith(".json"))
      .map((name) => join(cacheHome, "waymark", "scans", name))
      .filter((file) => readFileSync(file, "utf8").includes(JSON.stringify(dir)));
    if (cacheFile === undefined) throw new Error("no scan cache written");
    const cached = JSON.parse(readFileSync(cacheFile, "utf8"));
    cached.entries["kept.txt"].blob = "f".repeat(40);
    writeFileSync(cacheFile, JSON.stringify(cached));
    // Same size, new content, and the old mtime put back: the ctime still moved.
    writeFileSync(edited, "bbbb\n");
    utimesSync(edited, past, past);
    const second = JSON.parse(waymark(["snapshot", "--dir", dir]).stdout);
    expect(second.entries["kept.txt"].blob).toBe("f".repeat(40));
    expect(first.entries["edited.txt"].blob).toBe(gitBlob("aaaa\n"));
    expect(second.entries["edited.txt"].blob).toBe(gitBlob("bbbb\n"));
    // A cache that is not JSON is ignored: every file is hashed again.
    writeFileSync(cacheFile, "{ not json");
    const third = JSON.parse(waymark(["snapshot", "--dir", dir]).stdout);
    expect(third.entries["kept.txt"].blob).toBe(gitBlob("kept\n"));
    expect(third.entries["edited.txt"].blob).toBe(gitBlob("bbbb\n"));
    // A cache entry that would break the JSON written back is refused with the whole cache.
    cached.entries["kept.txt"].blob = 'x"y';
    writeFileSync(cacheFile, JSON.stringify(cached));
    const fourth = JSON.parse(waymark(["snapshot", "--dir", dir]).stdout);
    expect(fourth.entries["kept.txt"].blob).toBe(gitBlob("kept\n"));
  });

  it("snapshot, changes and the post-tool-use hook (run on every edit) start without loading zod or the MCP SDK (each costs about what starting Node does)", () => {
    const dir = tempDir();
    writeFileSync(join(dir, "x.txt"), "x\n");
    // A module hook of Node's that logs every module the command resolves.
    const log = join(tempDir(), "modules.log");
    const hook = join(tempDir(), "log-modules.mjs");
    const resolveHook = `import { appendFileSync } from "node:fs";
export async function resolve(specifier, context, next) {
  const resolved = await next(specifier, context);
  appendFileSync(${JSON.stringify(log)}, resolved.url + "\\n");
  return resolved;
}`;
    writeFileSync(
      hook,
      `import { register } from "node:module";\nregister(${JSON.stringify(`data:text/javascript,${encodeURIComponent(resolveHook)}`)});\n`,
    );
    const env = { ...process.env, XDG_CACHE_HOME: cacheHome };
    const snap = spawnSync(SYSTEM_NODE, ["--import", hook, BIN, "snapshot", "--dir", dir], { encoding: "utf8", env });
    expect(snap.status).toBe(0);
    const changes = spawnSync(SYSTEM_NODE, ["--import", hook, BIN, "changes", "--since", "-"], {
      input: snap.stdout,
      encoding: "utf8",
      env,
    });
    expect(changes.status).toBe(0);
    const edit = { cwd: dir, tool_name: "Edit", tool_input: { file_path: join(dir, "x.txt") } };
    const hookRun = spawnSync(SYSTEM_NODE, ["--import", hook, BIN, "hook", "post-tool-use", "--agent", "claude"], {
      input: JSON.stringify(edit),
      encoding: "utf8",
      env,
    });
    expect(hookRun.status).toBe(0);
    expect(hookRun.stderr).toBe("");
    const loaded = readFileSync(log, "utf8").split("\n");
    expect(loaded.filter((url) => url.endsWith("/dist/bin.js"))).toHaveLength(3);
    expect(loaded.filter((url) => /zod|modelcontextprotocol/.test(url))).toEqual([]);
  });

  it("changes --since refuses a checksum snapshot with a malformed entry, naming the field (exit 2)", () => {
    const dir = tempDir();
    writeFileSync(join(dir, "x.txt"), "x\n");
    const snap = JSON.parse(waymark(["snapshot", "--dir", dir]).stdout);
    snap.entries["x.txt"].mode = "040000";
    const r = waymark(["changes", "--since", "-"], { input: JSON.stringify(snap) });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('entries["x.txt"].mode must be one of 100644, 100755, 120000');
  });

  it("npx waymark --help works in the repository root (npm workspace bin)", () => {
    const r = spawnSync("npx", ["--no-install", "waymark", "--help"], { cwd: REPO_ROOT, encoding: "utf8" });
    expect(r.status).toBe(0);
    expect(r.stdout).toContain("Exit codes:");
  });
});

function gitBlob(content: string): string {
  return createHash("sha1")
    .update(`blob ${Buffer.byteLength(content)}\0${content}`)
    .digest("hex");
}
