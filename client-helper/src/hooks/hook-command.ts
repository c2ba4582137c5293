/**
 * @module hooks/hook-command
 * `waymark hook <event> --agent <agent> --url <endpoint>`: what the installed hooks run when their
 * shell lines cannot answer alone (every session start; a stop or an edit the lines leave to the
 * helper). The agent waits for it, so the bin loads this module straight away, with nothing of the
 * CLI's other commands or of the setup commands (init/commands.ts hands `hook` here too). Whatever
 * goes wrong, the agent's tool call or session goes on: exit 0.
 */
import { parseArgs } from "node:util";
import { HOOK_EVENTS, type HookEvent } from "@waymark/protocol/agent-config";
import { AGENT_NAMES, agentConfig } from "@waymark/protocol/agents";
import { resolveEndpoint } from "../endpoint.js";
import { runHook } from "./hook-runner.js";
import { ensureLauncher } from "./launcher.js";

export type HookIo = {
  stdout: (text: string) => void;
  stderr: (text: string) => void;
  stdin: () => Promise<string>;
};

/** Runs one hook (`args`: what follows `hook`); always 0. */
export async function runHookCommand(args: string[], io: HookIo, version: string, env: NodeJS.ProcessEnv = process.env): Promise<number> {
  try {
    const { values, positionals } = parseArgs({
      args,
      options: { agent: { type: "string" }, url: { type: "string" } },
      allowPositionals: true,
      strict: true,
    });
    const event = positionals[0] as HookEvent;
    // Without --agent: Claude Code's, whose hook lines came before the option.
    const agent = agentConfig(values.agent ?? "claude");
    if (!HOOK_EVENTS.includes(event) || !agent) {
      io.stderr(`waymark hook: unknown event or agent (events: ${HOOK_EVENTS.join(", ")}; agents: ${AGENT_NAMES.join(", ")})\n`);
      return 0;
    }
    const input = await io.stdin();
    await ensureLauncher(version);
    const result = await runHook(event, input, {
      agent,
      url: (await resolveEndpoint(values.url, env).catch(() => null))?.endpoint.mcp,
      token: env.WAYMARK_TOKEN || undefined,
      version,
    });
    io.stdout(result.stdout);
  } catch (error) {
    io.stderr(`waymark hook: ${error instanceof Error ? error.message : String(error)}\n`);
  }
  return 0;
}
