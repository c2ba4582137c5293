import { beforeAll, describe, expect, it } from "vitest";
import { type CallTool, toolCaller } from "../pages/fixture";
import type { DevServer } from "../support/dev-server";
import { type Got, getFrom as get, withinOneMinute } from "../support/loopback-get";
import { newReaderAddress } from "../support/reader-proxy";
import { sharedDevServer } from "../support/shared-server";

/**
 * What one reader of a share link can do to the link's other readers, attacked over real sockets
 * against `wrangler dev`, each reader from a loopback address of its own (a machine of its own to
 * the server's per-client budgets): a reader who spends its own budget, or holds a link the owner
 * rotated away, must not leave the link's other readers (the reviewer among them) refused.
 */

/** `count` GETs of `url` from `from`, `parallel` at a time: their statuses in the order asked. */
async function burst(url: string, from: string, count: number, parallel = 1): Promise<number[]> {
  const statuses: number[] = new Array(count);
  let next = 0;
  await Promise.all(
    Array.from({ length: parallel }, async () => {
      while (next < count) {
        const index = next++;
        statuses[index] = (await get(url, from)).status;
      }
    }),
  );
  return statuses;
}

describe("one reader cannot spend what a link's other readers get (wrangler dev, real sockets)", () => {
  let server: DevServer;
  let callTool: CallTool;

  beforeAll(() => {
    server = sharedDevServer();
    callTool = toolCaller(fetch, `${server.url}/mcp`, server.token);
  });

  /** A small shared workflow: a link, and a link budget, of its own. */
  async function shared(name: string): Promise<{ id: string; link: string }> {
    const wf = await callTool("start_workflow", { name });
    await callTool("start_task", { workflow_id: wf.workflow_id, name: "One task", goal: "g" });
    return { id: String(wf.workflow_id), link: String(wf.share_url) };
  }

  it("a reader exporting as fast as it can gets its share of the link's exports; the reviewer still exports", async () => {
    const { link } = await shared("Exported by a greedy reader");
    const [greedy, reviewer] = await withinOneMinute(async () => {
      const statuses = await burst(`${link}/export.md`, newReaderAddress(), 25);
      const answer: Got = await get(`${link}/export.md`, newReaderAddress());
      return [statuses, answer] as const;
    });
    expect(reviewer.status, reviewer.body.slice(0, 200)).toBe(200);
    expect(reviewer.body).toContain("Exported by a greedy reader");
    // The greedy reader's share: 5 a minute of this link, then 429.
    expect(greedy.slice(0, 5)).toEqual([200, 200, 200, 200, 200]);
    expect(new Set(greedy.slice(5))).toEqual(new Set([429]));
  }, 180_000);

  it("a reader over its own page budget costs the link nothing: 600 refused reads later, another reader reads", async () => {
    const { link } = await shared("Read by a greedy reader");
    const [greedy, other] = await withinOneMinute(async () => {
      // More than the link's 600 a minute, from one client whose own budget is 20 per 10 s.
      const statuses = await burst(`${link}/blocks`, newReaderAddress(), 620, 16);
      return [statuses, await get(link, newReaderAddress())] as const;
    });
    expect(other.status, other.body.slice(0, 200)).toBe(200);
    // What its own budget let through: 20 per 10 s window the burst touched.
    const served = greedy.filter((status) => status === 200).length;
    expect(served).toBeGreaterThanOrEqual(20);
    expect(served).toBeLessThanOrEqual(140);
    expect(greedy.filter((status) => status !== 200 && status !== 429)).toEqual([]);
  }, 180_000);

  it("a link rotated away is checked before its reads are charged: its old holders' 404s leave the new link's readers theirs", async () => {
    const { id, link: old } = await shared("Rotated after a leak");
    const rotated = await fetch(`${server.url}/api/workflows/${id}/share`, {
      method: "POST",
      headers: { Authorization: `Bearer ${server.token}`, "Content-Type": "application/json" },
      body: JSON.stringify({ action: "rotate" }),
    });
    expect(rotated.status).toBe(200);
    const link = String(((await rotated.json()) as { share_url: string }).share_url);
    expect(link).not.toBe(old);
    const [dead, reader] = await withinOneMinute(async () => {
      // Five holders of the old link, each within its own budgets: 25 exports asked, more than the link's 20.
      const holders = Array.from({ length: 5 }, () => newReaderAddress());
      const statuses = (await Promise.all(holders.map((from) => burst(`${old}/export.json`, from, 5)))).flat();
      return [statuses, await get(`${link}/export.json`, newReaderAddress())] as const;
    });
    expect(reader.status, reader.body.slice(0, 200)).toBe(200);
    expect(JSON.parse(reader.body)).toMatchObject({ workflow: { id } });
    expect(new Set(dead)).toEqual(new Set([404]));
  }, 180_000);
});
