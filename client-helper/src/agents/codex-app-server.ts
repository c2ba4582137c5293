/**
 * @module agents/codex-app-server
 * How Codex itself sees a project, asked of the user's own `codex` (its app-server, JSON-RPC on
 * stdio, as Codex 0.169 serves it), never guessed from files:
 * - for `waymark doctor` (./codex.ts asks it): whether it loads the project's `.codex/` layer (an
 *   untrusted project's layer is disabled, with the reason), whether hooks are enabled, and the
 *   trust status of each hook it found there (`trusted`, `untrusted`, or `modified` since it was
 *   trusted);
 * - for `waymark init --trust-codex`, the headless way to give the trust a person gives in `codex`
 *   (answering yes to trusting the folder, then /hooks): Codex writes the project's trust and, for
 *   each hook it lists whose definition is exactly the one init writes, the hash it lists as
 *   trusted, into its own config (`config/value/write`), where it keeps both. A hook that differs in
 *   any way from init's (a repository's own, or one edited since) is never trusted here.
 */
import { spawn } from "node:child_process";
import { homedir } from "node:os";

export type CodexHook = { event: string; command: string; trust: string };
export type CodexView = { projectDisabled: string | null; hooksEnabled: boolean; hooks: CodexHook[] };
type Unavailable = { unavailable: string };

type Message = { id?: number; result?: unknown; error?: { message?: string } };
/** A hook as `hooks/list` lists it. */
type ListedHook = {
  key?: string;
  eventName?: string;
  command?: string;
  matcher?: string | null;
  currentHash?: string;
  trustStatus?: string;
};

/** A JSON-RPC error answered by the app-server. */
class AppServerError extends Error {}

/** One `codex app-server` process: initialize, then requests in order, each awaited. */
class AppServer {
  private readonly child: ReturnType<typeof spawn>;
  private readonly waiting = new Map<number, (message: Message) => void>();
  private nextId = 1;
  private buffer = "";
  private failure: string | null = null;

  constructor(env: NodeJS.ProcessEnv) {
    this.child = spawn("codex", ["app-server"], { cwd: env.HOME || homedir(), env, stdio: ["pipe", "pipe", "ignore"] });
    this.child.on("error", (error: NodeJS.ErrnoException) => this.fail(error.code === "ENOENT" ? "codex is not on PATH" : error.message));
    this.child.on("exit", () => this.fail("codex app-server exited"));
    this.child.stdout?.on("data", (chunk: Buffer) => this.read(chunk));
  }

  private fail(reason: string): void {
    this.failure ??= reason;
    for (const done of this.waiting.values()) done({ error: { message: reason } });
    this.waiting.clear();
  }

  private read(chunk: Buffer): void {
    this.buffer += chunk.toString("utf8");
    for (let newline = this.buffer.indexOf("\n"); newline >= 0; newline = this.buffer.indexOf("\n")) {
      const line = this.buffer.slice(0, newline);
      this.buffer = this.buffer.slice(newline + 1);
      let message: Message;
      try {
        message = JSON.parse(line) as Message;
      } catch {
        continue;
      }
      if (typeof message.id !== "number") continue;
      this.waiting.get(message.id)?.(message);
      this.waiting.delete(message.id);
    }
  }

  /** The request's result; an AppServerError with the server's message when it answers an error. */
  request(method: string, params: object): Promise<unknown> {
    if (this.failure) return Promise.reject(new AppServerError(this.failure));
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.waiting.set(id, (message) =>
        message.error ? reject(new AppServerError(message.error.message ?? "error")) : resolve(message.result),
      );
      this.child.stdin?.write(`${JSON.stringify({ id, method, params })}\n`);
    });
  }

  async initialize(): Promise<void> {
    await this.request("initialize", { clientInfo: { name: "waymark", version: "1" } });
    this.child.stdin?.write(`${JSON.stringify({ method: "initialized" })}\n`);
  }

  close(): void {
    this.child.kill();
  }
}

/** Runs `talk` against a fresh app-server, bounded by `timeoutMs`; why it could not, otherwise. */
async function withAppServer<T>(
  env: NodeJS.ProcessEnv,
  timeoutMs: number,
  talk: (server: AppServer) => Promise<T>,
): Promise<T | Unavailable> {
  let server: AppServer;
  try {
    server = new AppServer(env);
  } catch (error) {
    return { unavailable: String(error) };
  }
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<Unavailable>((resolve) => {
    timer = setTimeout(() => resolve({ unavailable: `codex app-server did not answer within ${timeoutMs / 1000} s` }), timeoutMs);
  });
  try {
    return await Promise.race([server.initialize().then(() => talk(server)), late]);
  } catch (error) {
    return { unavailable: error instanceof Error ? error.message : String(error) };
  } finally {
    clearTimeout(timer);
    server.close();
  }
}

/** Codex's hooks of `project`, as `hooks/list` lists them. */
async function listHooks(server: AppServer, project: string): Promise<ListedHook[]> {
  const listed = ((await server.request("hooks/list", { cwds: [project] })) as { data?: { hooks?: ListedHook[] }[] }).data ?? [];
  return listed.flatMap((entry) => entry.hooks ?? []);
}

/** Codex's view of `project`, or why it could not be asked (codex missing, an error, no answer in time). */
export function codexView(project: string, env: NodeJS.ProcessEnv, timeoutMs = 20_000): Promise<CodexView | Unavailable> {
  return withAppServer(env, timeoutMs, async (server) => {
    const [config, hooks] = await Promise.all([
      server.request("config/read", { includeLayers: true, cwd: project }),
      listHooks(server, project),
    ]);
    const read = config as {
      config?: { features?: Record<string, unknown> };
      layers?: { name?: { type?: string; dotCodexFolder?: string }; disabledReason?: string | null }[];
    };
    const layer = read.layers?.find((l) => l.name?.type === "project" && l.name.dotCodexFolder === `${project}/.codex`);
    return {
      projectDisabled: layer?.disabledReason ?? null,
      hooksEnabled: read.config?.features?.hooks !== false,
      hooks: hooks.map((hook) => ({ event: hook.eventName ?? "", command: hook.command ?? "", trust: hook.trustStatus ?? "" })),
    };
  });
}

/** A hook as init writes it: the event as the app-server names it (sessionStart…), its matcher, its command. */
export type ExpectedHook = { event: string; matcher: string | null; command: string };

/** What init --trust had Codex write: the project's trust (false: it was trusted already), each hook's, and the hooks it did not list as init wrote them. */
export type TrustGiven = { project: boolean; hooks: { event: string; hash: string; already: boolean }[]; missing: string[] };

/** A TOML key path segment, quoted (the app-server's keyPath reads TOML's quoted keys). */
const segment = (key: string) => JSON.stringify(key);

/**
 * Has Codex trust `project` and each of `expected` it lists there with exactly that definition,
 * writing both into its own config; returns what it trusts now, or why it could not be asked.
 */
export function trustInCodex(
  project: string,
  expected: readonly ExpectedHook[],
  env: NodeJS.ProcessEnv,
  timeoutMs = 30_000,
): Promise<TrustGiven | Unavailable> {
  return withAppServer(env, timeoutMs, async (server) => {
    const write = (keyPath: string, value: string) => server.request("config/value/write", { keyPath, value, mergeStrategy: "replace" });
    const before = await server.request("config/read", { includeLayers: true, cwd: project });
    const layer = (
      before as { layers?: { name?: { type?: string; dotCodexFolder?: string }; disabledReason?: string | null }[] }
    ).layers?.find((l) => l.name?.type === "project" && l.name.dotCodexFolder === `${project}/.codex`);
    // Codex disables an untrusted project's layer, saying why.
    const untrusted = layer === undefined || (layer.disabledReason ?? null) !== null;
    if (untrusted) await write(`projects.${segment(project)}.trust_level`, "trusted");
    // Listed afresh: Codex lists a project's hooks only once it trusts the project.
    const listed = await listHooks(server, project);
    const trusted: TrustGiven["hooks"] = [];
    const missing: string[] = [];
    for (const hook of expected) {
      const found = listed.find(
        (entry) => entry.eventName === hook.event && entry.command === hook.command && (entry.matcher ?? null) === hook.matcher,
      );
      if (!found?.key || !found.currentHash) {
        missing.push(hook.event);
        continue;
      }
      const already = found.trustStatus === "trusted";
      if (!already) await write(`hooks.state.${segment(found.key)}.trusted_hash`, found.currentHash);
      trusted.push({ event: hook.event, hash: found.currentHash, already });
    }
    return { project: untrusted, hooks: trusted, missing };
  });
}
