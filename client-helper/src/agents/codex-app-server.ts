/**
 * @module agents/codex-app-server
 * How Codex itself sees a project, for `waymark doctor` (./codex.ts asks it): asked of the user's own `codex` (its
 * app-server, JSON-RPC on stdio, as Codex 0.169 serves it), never guessed from files: whether
 * it loads the project's `.codex/` layer (an untrusted project's layer is disabled, with the
 * reason), whether hooks are enabled, and the trust status of each hook it found there
 * (`trusted`, `untrusted`, or `modified` since it was trusted).
 */
import { spawn } from "node:child_process";
import { homedir } from "node:os";

export type CodexHook = { event: string; command: string; trust: string };
export type CodexView = { projectDisabled: string | null; hooksEnabled: boolean; hooks: CodexHook[] };

type Message = { id?: number; result?: unknown; error?: { message?: string } };

/** Codex's view of `project`, or why it could not be asked (codex missing, an error, no answer in time). */
export function codexView(project: string, env: NodeJS.ProcessEnv, timeoutMs = 20_000): Promise<CodexView | { unavailable: string }> {
  return new Promise((resolve) => {
    let child: ReturnType<typeof spawn>;
    try {
      child = spawn("codex", ["app-server"], { cwd: env.HOME || homedir(), env, stdio: ["pipe", "pipe", "ignore"] });
    } catch (error) {
      resolve({ unavailable: String(error) });
      return;
    }
    const results = new Map<number, Message>();
    let settled = false;
    const finish = (value: CodexView | { unavailable: string }) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      child.kill();
      resolve(value);
    };
    const timer = setTimeout(() => finish({ unavailable: `codex app-server did not answer within ${timeoutMs / 1000} s` }), timeoutMs);
    child.on("error", (error: NodeJS.ErrnoException) =>
      finish({ unavailable: error.code === "ENOENT" ? "codex is not on PATH" : error.message }),
    );
    const send = (message: object) => child.stdin?.write(`${JSON.stringify(message)}\n`);
    let buffer = "";
    child.stdout?.on("data", (chunk: Buffer) => {
      buffer += chunk.toString("utf8");
      for (let newline = buffer.indexOf("\n"); newline >= 0; newline = buffer.indexOf("\n")) {
        const line = buffer.slice(0, newline);
        buffer = buffer.slice(newline + 1);
        let message: Message;
        try {
          message = JSON.parse(line) as Message;
        } catch {
          continue;
        }
        if (typeof message.id !== "number") continue;
        results.set(message.id, message);
        if (message.id === 1) {
          send({ method: "initialized" });
          send({ id: 2, method: "config/read", params: { includeLayers: true, cwd: project } });
          send({ id: 3, method: "hooks/list", params: { cwds: [project] } });
        }
        if (results.has(2) && results.has(3)) finish(interpret(project, results.get(2) as Message, results.get(3) as Message));
      }
    });
    send({ id: 1, method: "initialize", params: { clientInfo: { name: "waymark-doctor", version: "1" } } });
  });
}

function interpret(project: string, config: Message, hooks: Message): CodexView | { unavailable: string } {
  if (config.error || hooks.error) return { unavailable: config.error?.message ?? hooks.error?.message ?? "error" };
  const read = config.result as {
    config?: { features?: Record<string, unknown> };
    layers?: { name?: { type?: string; dotCodexFolder?: string }; disabledReason?: string | null }[];
  };
  const layer = read.layers?.find((l) => l.name?.type === "project" && l.name.dotCodexFolder === `${project}/.codex`);
  const listed = (hooks.result as { data?: { hooks?: { eventName?: string; command?: string; trustStatus?: string }[] }[] }).data ?? [];
  return {
    projectDisabled: layer?.disabledReason ?? null,
    hooksEnabled: read.config?.features?.hooks !== false,
    hooks: listed.flatMap((entry) =>
      (entry.hooks ?? []).map((hook) => ({ event: hook.eventName ?? "", command: hook.command ?? "", trust: hook.trustStatus ?? "" })),
    ),
  };
}
