import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { delimiter, join, resolve } from "node:path";

/**
 * A real `wrangler dev` (workerd) for end-to-end tests. Started from the repository root
 * through npx with node_modules/.bin first on PATH (so Node 22 runs wrangler), on free
 * ports, with data persisted in a temporary directory that survives `restart()` and is
 * removed by `stop()`. Startup failures throw with the tail of wrangler's output.
 */
export interface DevServer {
  /** http://127.0.0.1:<port> */
  url: string;
  /** Bearer token of the "dev" account. */
  token: string;
  /** Stops the server and removes its data (unless `persistTo` was given). */
  stop(): Promise<void>;
  /** Stops and starts again on the same port with the same data (open WebSockets drop). */
  restart(): Promise<void>;
  /** wrangler's output so far (for assertion messages). */
  output(): string;
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
}

const REPO_ROOT = resolve(import.meta.dirname, "../..");
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

export async function startDevServer(options: DevServerOptions = {}): Promise<DevServer> {
  const token = options.token ?? `dev-token-${Math.random().toString(36).slice(2, 12)}`;
  const port = options.port ?? (await freePort());
  const ownDir = options.persistTo === undefined;
  const persistTo = options.persistTo ?? mkdtempSync(join(tmpdir(), "waymark-dev-"));
  const url = `http://127.0.0.1:${port}`;
  const timeout = options.startTimeoutMs ?? 90_000;
  let output = "";
  let child: ChildProcess | null = null;

  const launch = async () => {
    const inspectorPort = await freePort();
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
    args.push("--var", `WAYMARK_DEV_TOKEN:${token}`, "--show-interactive-dev-session=false");
    for (const [name, value] of Object.entries(options.vars ?? {})) args.push("--var", `${name}:${value}`);
    const proc = spawn("npx", args, {
      cwd: REPO_ROOT,
      // Own process group, so stop() ends npx, wrangler and workerd together.
      detached: true,
      stdio: ["ignore", "pipe", "pipe"],
      env: {
        ...process.env,
        PATH: `${join(REPO_ROOT, "node_modules", ".bin")}${delimiter}${process.env.PATH ?? ""}`,
        WRANGLER_SEND_METRICS: "false",
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
    throw new Error(`wrangler dev ${why}. Output:\n${output.slice(-4000)}`);
  };

  await launch();
  return {
    url,
    token,
    output: () => output,
    async stop() {
      if (child) await kill(child);
      child = null;
      if (ownDir) rmSync(persistTo, { recursive: true, force: true });
    },
    async restart() {
      if (child) await kill(child);
      child = null;
      await launch();
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
