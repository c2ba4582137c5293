/**
 * @module proxy/start-workflow
 * start_workflow through the helper: forwarded with the repository's identity (resume by name
 * stays within this repository); the workflow's id and share link are kept for
 * `waymark summary` in this directory.
 */
import type { CallToolResult } from "@modelcontextprotocol/server";
import { redactHelperInput } from "@waymark/protocol/redact";
import { readRepository } from "../repository.js";
import { recordWorkflow } from "../summary-command.js";
import type { ProxySession } from "./session.js";

export async function startWorkflow(session: ProxySession, dir: string, input: Record<string, unknown>): Promise<CallToolResult> {
  const { repository: _ignored, ...args } = input;
  // The remote and branch as they may leave the machine: secrets redacted (a token in a remote URL, a branch name).
  const read = await readRepository(dir);
  const repository = read ? redactHelperInput(read).value : null;
  const result = await session.remote.request("tools/call", {
    name: "start_workflow",
    arguments: repository ? { ...args, repository } : args,
  });
  if (!result.isError) await recordWorkflow(session.cache, session.options.url, dir, result).catch(() => {});
  return result;
}
