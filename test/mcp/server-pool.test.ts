/**
 * The MCP servers are built once per isolate and each serves one exchange after another
 * (src/mcp/server.ts): every handler must act for the account and client of the request it
 * serves, never for one a server served before. Two accounts' calls interleaved on one isolate
 * each see their own workflow only; a client that renders apps is offered the app's tool and one
 * that does not is not, however the requests alternate; 2025-era clients are served as well.
 */
import { describe, expect, it } from "vitest";
import { callTool, connect, ok } from "../support/mcp-client";
import { TOKENS, workerTarget } from "../support/worker";

describe("servers shared between requests", () => {
  it("two accounts interleaved: each call acts for its own account", async () => {
    const acme = await connect(workerTarget(TOKENS.acme), { negotiation: "auto" });
    const globex = await connect(workerTarget(TOKENS.globex), { negotiation: "auto" });
    const mine = (await ok<{ workflow_id: string }>(acme, "start_workflow", { name: "Acme's", force_new: true })).workflow_id;
    const theirs = (await ok<{ workflow_id: string }>(globex, "start_workflow", { name: "Globex's", force_new: true })).workflow_id;
    const rounds = await Promise.all(
      Array.from({ length: 12 }, async (_, i) => {
        const [client, own, other] = i % 2 === 0 ? [acme, mine, theirs] : [globex, theirs, mine];
        const [seen, refused] = await Promise.all([
          callTool(client, "get_workflow", { workflow_id: own }),
          callTool(client, "get_workflow", { workflow_id: other }),
        ]);
        return { seen, refused, own };
      }),
    );
    for (const { seen, refused, own } of rounds) {
      expect(seen.isError, seen.text).toBe(false);
      expect((seen.structured.workflow as { id: string }).id).toBe(own);
      expect(refused.isError).toBe(true);
      expect(refused.text).toMatch(/^NOT_FOUND/);
    }
  });

  it("the app's tool is listed for a client that renders apps only, whatever the order", async () => {
    const host = await connect(workerTarget(), { negotiation: "auto", rendersApps: true });
    const plain = await connect(workerTarget(), { negotiation: "auto" });
    const legacy = await connect(workerTarget(), { negotiation: "legacy" });
    for (let i = 0; i < 3; i++) {
      const [hosted, bare, old] = await Promise.all([host.listTools(), plain.listTools(), legacy.listTools()]);
      expect(hosted.tools.map((t) => t.name)).toContain("send_feedback");
      expect(bare.tools.map((t) => t.name)).not.toContain("send_feedback");
      expect(old.tools.map((t) => t.name)).not.toContain("send_feedback");
      expect(bare.tools.map((t) => t.name)).toContain("log_milestone");
    }
  });
});
