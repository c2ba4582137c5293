/**
 * A real `wrangler dev` (workerd) for end-to-end tests and benches. Started from the repository
 * root (or another checkout, for A/B benches) through npx with node_modules/.bin first on PATH
 * (so Node 22 runs wrangler), on free ports, with data persisted in a temporary directory that
 * survives `restart()` and is removed by `stop()`. Startup failures throw with the tail of
 * wrangler's output. Also: finding, freezing and killing a running server's processes through
 * /proc, for the fault tests and the memory figures of the benches.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { delimiter, join } from "node:path";
import { ensureWorkerBuild, REPO_ROOT } from "./worker-build-setup.ts";

export interface DevServer {
  /** http://127.0.0.1:<port> */
  url: string;
  /** Bearer token of the "dev" account. */
  token: string;
  /** Stops the server and removes its data (unless `persistTo` was given). */
  stop(): Promise<void>;
  /**
   * Stops and starts again on the same port with the same data (open WebSockets drop), with
   * `vars` replacing bindings of the same name (a configuration change, as a redeploy makes it).
   */
  restart(vars?: Record<string, string>): Promise<void>;
  /** wrangler's output so far (for assertion messages). */
  output(): string;
  /** wrangler's DevTools inspector for the Worker's isolate (a new port after each restart). */
  inspectorUrl(): string;
}

export interface DevServerOptions {
  token?: string;
  port?: number;
  /** Directory for persisted state; a temporary one by default. */
  persistTo?: string;
  /** Extra `--var NAME:value` bindings. */
  vars?: Record<string, string>;
  /** How long to wait for the server to answer /health. */
  startTimeoutMs?: number;
  /** The checkout to serve (its wrangler.toml and node_modules); this repository by default. */
  root?: string;
  /**
   * The temporary data directory on /dev/shm (tmpfs) instead of the system's temporary directory
   * (where it exists; ignored with `persistTo`). SQLite's journal mode, its commits and their
   * fsyncs are unchanged; a flush just does not wait for a disk.
   */
  dataInMemory?: boolean;
  /** wrangler's `--log-level` (its default, `log`, as `npm start` runs it, when not given). */
  logLevel?: "debug" | "info" | "log" | "warn" | "error" | "none";
  /** Another Worker's wrangler config to serve (relative to `root`), e.g. the bench's floor Worker; `root`'s wrangler.toml by default. */
  config?: string;
}

const OUTPUT_LIMIT = 64 * 1024;

export async function freePort(): Promise<number> {
  return new Promise((resolvePort, reject) => {
    const server = createServer();
    server.unref();
    server.on("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      server.close(() => (typeof address === "object" && address ? resolvePort(address.port) : reject(new Error("no port"))));
    });
  });
}

/** A dev server that did not start; `addressInUse`: because an address it binds was taken. */
class StartFailure extends Error {
  readonly addressInUse: boolean;
  // No parameter property: the benches load this file through Node's type stripping.
  constructor(message: string, addressInUse: boolean) {
    super(message);
    this.addressInUse = addressInUse;
  }
}

export async function startDevServer(options: DevServerOptions = {}): Promise<DevServer> {
  const token = options.token ?? `dev-token-${Math.random().toString(36).slice(2, 12)}`;
  let port = options.port ?? (await freePort());
  const ownDir = options.persistTo === undefined;
  const scratchRoot = options.dataInMemory && existsSync("/dev/shm") ? "/dev/shm" : tmpdir();
  const persistTo = options.persistTo ?? mkdtempSync(join(scratchRoot, "waymark-dev-"));
  let url = `http://127.0.0.1:${port}`;
  const timeout = options.startTimeoutMs ?? 90_000;
  const root = options.root ?? REPO_ROOT;
  let vars = { ...options.vars };
  // This checkout's Worker bundles its page scripts and the helper tarball; an old build checked out elsewhere predates them.
  if (root === REPO_ROOT && options.config === undefined) ensureWorkerBuild(root);
  let output = "";
  let child: ChildProcess | null = null;

  let inspectorPort = 0;
  const launch = async () => {
    inspectorPort = await freePort();
    const args = [
      "wrangler",
      "dev",
      "--ip",
      "127.0.0.1",
      "--port",
      String(port),
      "--inspector-port",
      String(inspectorPort),
      "--persist-to",
      persistTo,
    ];
    if (options.config !== undefined) args.push("--config", options.config);
    args.push("--var", `WAYMARK_DEV_TOKEN:${token}`, "--show-interactive-dev-session=false");
    if (options.logLevel !== undefined) args.push("--log-level", options.logLevel);
    for (const [name, value] of Object.entries(vars)) args.push("--var", `${name}:${value}`);
    const proc = spawn("npx", args, {
      cwd: root,
      // Own process group, so stop() ends npx, wrangler and workerd together.
      detached: true,
      stdio: ["ignore", "pipe", "pipe"],
      env: {
        ...process.env,
        PATH: `${join(root, "node_modules", ".bin")}${delimiter}${process.env.PATH ?? ""}`,
        WRANGLER_SEND_METRICS: "false",
        // As `npm start` runs it (scripts/start.sh): wrangler's Local Explorer and its trace capture
        // off unless the environment turns them on (`X_LOCAL_OBSERVABILITY=true npm run bench`).
        X_LOCAL_EXPLORER: process.env.X_LOCAL_EXPLORER ?? "false",
        X_LOCAL_OBSERVABILITY: process.env.X_LOCAL_OBSERVABILITY ?? "false",
        // Nor does it fetch a `Request.cf` sample from the network (Waymark reads no `cf` field):
        // offline, that fetch printed two stack traces into every bench's output.
        CLOUDFLARE_CF_FETCH_ENABLED: process.env.CLOUDFLARE_CF_FETCH_ENABLED ?? "false",
        CI: "true",
        NO_COLOR: "1",
      },
    });
    const keep = (chunk: Buffer) => {
      output = (output + chunk.toString()).slice(-OUTPUT_LIMIT);
    };
    proc.stdout?.on("data", keep);
    proc.stderr?.on("data", keep);
    child = proc;
    const deadline = Date.now() + timeout;
    while (Date.now() < deadline) {
      if (proc.exitCode !== null || proc.signalCode !== null) break;
      try {
        const response = await fetch(`${url}/health`, { signal: AbortSignal.timeout(2000) });
        if (response.ok) return;
      } catch {
        // Not listening yet.
      }
      await new Promise((r) => setTimeout(r, 200));
    }
    const why = proc.exitCode !== null ? `exited with code ${proc.exitCode}` : `did not answer ${url}/health within ${timeout} ms`;
    await kill(proc);
    throw new StartFailure(`wrangler dev ${why}. Output:\n${output.slice(-4000)}`, output.includes("Address already in use"));
  };

  // A port found free can be taken by another server of a parallel test file before wrangler
  // binds it (its own sockets included): start again, on a new port unless the caller chose one
  // or the server restarts (its clients know its port).
  const start = async (samePort: boolean) => {
    for (let attempt = 1; ; attempt++) {
      try {
        return await launch();
      } catch (error) {
        if (!(error instanceof StartFailure && error.addressInUse) || attempt === 3) throw error;
        output = "";
        if (!samePort) {
          port = await freePort();
          url = `http://127.0.0.1:${port}`;
        }
      }
    }
  };

  await start(options.port !== undefined);
  return {
    url,
    token,
    output: () => output,
    inspectorUrl: () => `ws://127.0.0.1:${inspectorPort}/ws`,
    async stop() {
      if (child) await kill(child);
      child = null;
      if (ownDir) rmSync(persistTo, { recursive: true, force: true });
    },
    async restart(changed = {}) {
      if (child) await kill(child);
      child = null;
      vars = { ...vars, ...changed };
      await start(true);
    },
  };
}

/** SIGTERM to the whole process group, SIGKILL after 5 s. */
async function kill(proc: ChildProcess): Promise<void> {
  if (proc.exitCode !== null || proc.signalCode !== null || proc.pid === undefined) return;
  const exited = new Promise<void>((r) => proc.once("exit", () => r()));
  const signal = (name: NodeJS.Signals) => {
    try {
      process.kill(-(proc.pid as number), name);
    } catch {
      // Already gone.
    }
  };
  signal("SIGTERM");
  const timer = setTimeout(() => signal("SIGKILL"), 5000);
  await exited;
  clearTimeout(timer);
  // workerd children may outlive npx; make sure the group is gone.
  signal("SIGKILL");
}

// ── the processes of a running server ────────────────────────────────────────

/**
 * The process group of the `wrangler dev` serving `port` (npx, wrangler and workerd share it:
 * the dev server starts it detached). Found through /proc by the port on wrangler's command line.
 */
export function devServerGroup(port: number): number | null {
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const argv = readFileSync(`/proc/${entry}/cmdline`, "utf8").split("\0");
      const at = argv.indexOf("--port");
      if (!argv.some((a) => a.endsWith("wrangler") || a === "dev") || at < 0 || argv[at + 1] !== String(port)) continue;
      // /proc/<pid>/stat: "pid (comm) state ppid pgrp …"; comm may contain spaces, so split after ')'.
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
      const pgrp = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[2]);
      if (pgrp > 1) return pgrp;
    } catch {
      // The process ended while we looked.
    }
  }
  return null;
}

/** kill -9 of the whole dev server (npx, wrangler, workerd) at once: no shutdown path runs. */
export function crashDevServer(port: number): number {
  const group = devServerGroup(port);
  if (group === null) throw new Error(`no wrangler dev process found for port ${port}`);
  process.kill(-group, "SIGKILL");
  return group;
}

/** Freezes (SIGSTOP) or thaws (SIGCONT) the dev server's process group. */
export function signalDevServer(port: number, signal: "SIGSTOP" | "SIGCONT"): void {
  const group = devServerGroup(port);
  if (group === null) throw new Error(`no wrangler dev process found for port ${port}`);
  process.kill(-group, signal);
}

/** Waits until nothing answers on the URL (after a crash). */
export async function waitDown(target: { url: string }, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    try {
      await fetch(`${target.url}/health`, { signal: AbortSignal.timeout(500) });
    } catch {
      return;
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`${target.url} still answers ${timeoutMs} ms after the crash`);
}

/**
 * The workerd process that runs the Worker and its Durable Objects for the dev server on
 * `port`. `wrangler dev` starts two: one for its own proxy (listening on the port) and this
 * one, which it starts with an inspector address.
 */
export function workerdPid(port: number): number | null {
  const group = devServerGroup(port);
  if (group === null) return null;
  const worker = processesInGroup(group).find((p) => p.comm === "workerd" && p.cmdline.includes("--inspector-addr"));
  return worker?.pid ?? null;
}

/** A process as /proc names it: its id, its command's name and its command line (NUL-separated). */
export interface ProcessEntry {
  pid: number;
  comm: string;
  cmdline: string;
}

/** The processes of one process group, read from /proc (one that ends while it is read is left out). */
export function processesInGroup(group: number): ProcessEntry[] {
  const found: ProcessEntry[] = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
      const pgrp = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[2]);
      if (pgrp !== group) continue;
      const comm = stat.slice(stat.indexOf("(") + 1, stat.lastIndexOf(")"));
      found.push({ pid: Number(entry), comm, cmdline: readFileSync(`/proc/${entry}/cmdline`, "utf8") });
    } catch {
      // The process ended while we looked.
    }
  }
  return found;
}
