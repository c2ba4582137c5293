import { describe, expect, it } from "vitest";
import { callTool, connect } from "../support/mcp-client";
import { ORIGIN, signIn, TOKENS, workerFetch, workerTarget } from "../support/worker";

describe("THROWAWAY head.json", () => {
  it("answers for every reader", async () => {
    const client = await connect(workerTarget(TOKENS.acme));
    const wf = (await callTool(client, "start_workflow", { name: "Head" })).structured;
    await client.close();
    const id = String(wf.workflow_id);
    for (const [url, headers] of [
      [`${wf.share_url}/head.json`, {}],
      [`${ORIGIN}/w/${id}/head.json`, { Cookie: await signIn() }],
      [`${ORIGIN}/api/workflows/${id}/head.json`, { Authorization: `Bearer ${TOKENS.acme}` }],
      [`${ORIGIN}/api/workflows/${encodeURIComponent(id)}/h%65ad.json`, { Authorization: `Bearer ${TOKENS.acme}` }],
    ] as [string, Record<string, string>][]) {
      const response = await workerFetch(url, { headers });
      expect(response.status, url).toBe(200);
      expect(await response.json()).toMatchObject({ task_count: 0 });
    }
  });
});

describe("THROWAWAY /api/settings", () => {
  it("answers an admin token, percent-encoded too", async () => {
    for (const path of ["/api/settings", "/api/%73ettings"]) {
      const response = await workerFetch(`${ORIGIN}${path}`, { headers: { Authorization: `Bearer ${TOKENS.acme}` } });
      expect(response.status).toBe(200);
      expect(await response.json()).toHaveProperty("share_new_workflows");
    }
  });
});
