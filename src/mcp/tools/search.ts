import type { McpServer } from "@modelcontextprotocol/server";
import { z } from "zod";
import type { MemoryHit } from "../../account/memory";
import { ok } from "../../errors";
import { LIMITS } from "../../limits";
import { advertise, outputShape, parseArguments } from "../arguments";
import { errorResult, fromRpc, type ToolContext } from "../context";
import { requiredText } from "../fields";

export const searchInput = z.strictObject({
  query: requiredText(LIMITS.SEARCH_QUERY),
  limit: z.number().int().min(1).max(LIMITS.SEARCH_RESULTS).optional(),
});

const output = outputShape({ match: "string", results: "array" });

function render(out: { match: "all" | "any"; results: MemoryHit[] }): string {
  if (out.results.length === 0) return "no matches";
  const lines = out.results.map((r) => `${r.kind} ${r.id} (${r.workflow_id}): ${r.text}`);
  return out.match === "any" ? ["no result has every word; results with some:", ...lines].join("\n") : lines.join("\n");
}

/** Full-text search over the account's past work (memory, src/account/memory.ts). */
export function registerSearch(server: McpServer, ctx: ToolContext): void {
  server.registerTool(
    "search",
    {
      description: "Search past tasks, decisions and issues.",
      inputSchema: advertise(searchInput),
      outputSchema: output,
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    async (args) => {
      const parsed = parseArguments(searchInput, args);
      if (!parsed.ok) return errorResult(parsed);
      const { query, limit } = parsed.value;
      const account = ctx.env.ACCOUNT.get(ctx.env.ACCOUNT.idFromName(ctx.account));
      return fromRpc(async () => ok(await account.search(query, limit ?? 5)), render);
    },
  );
}
