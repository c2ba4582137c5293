import { beforeAll, describe, expect, it } from "vitest";
import { LIMITS } from "../../src/limits";
import { type CallTool, toolCaller } from "../pages/fixture";
import type { DevServer } from "../support/dev-server";
import { getFrom as get, withinOneMinute } from "../support/loopback-get";
import { newReaderAddress } from "../support/reader-proxy";
import { sharedDevServer } from "../support/shared-server";
import { recordWideWorkflow, type WideWorkflow } from "../support/wide-workflow";

/**
 * What one holder of a share link can make the server do, attacked over real sockets against
 * `wrangler dev`: a workflow of 10 tasks × 20,000 files (the widest an agent can record) comes
 * back as pages under 2 MB each (a page of tasks, the first files of each, the rest a link
 * away); positions in the URL that are not ones the server gave out are refused by name; and
 * reads are rate-limited per client (each reader reads from its own loopback address, as a
 * different machine would) and per link, exports more tightly (what one reader cannot do to a
 * link's other readers: read-fairness.test.ts).
 */

const MAX_PAGE_BYTES = 2 * 1024 * 1024;

describe("bounded, rate-limited shared reads (wrangler dev, real sockets)", () => {
  let server: DevServer;
  let callTool: CallTool;
  let wide: WideWorkflow;

  beforeAll(async () => {
    server = sharedDevServer();
    callTool = toolCaller(fetch, `${server.url}/mcp`, server.token);
    wide = await recordWideWorkflow(callTool, 10, 20_000);
  }, 600_000);

  /** A small shared workflow: a link (and a link budget) of its own. */
  async function smallLink(name: string): Promise<string> {
    const wf = await callTool("start_workflow", { name });
    await callTool("start_task", { workflow_id: wf.workflow_id, name: "One task", goal: "g" });
    return String(wf.share_url);
  }

  it("answers the page, its live blocks and a task's files in pages under 2 MB, however wide the workflow", async () => {
    const page = await get(wide.shareUrl, "127.0.0.2");
    expect(page.status).toBe(200);
    expect(page.bytes).toBeLessThan(MAX_PAGE_BYTES);
    for (let t = 0; t < 10; t++) expect(page.body).toContain(`>Sweep ${t}<`);
    // Each card lists the first files and says how many more there are, with the link to them all.
    expect(page.body).toContain("Files changed (20,000)");
    expect(page.body.match(/<tr class="file/g)?.length).toBe(10 * LIMITS.PAGE_FILES);
    expect(page.body).toContain(`${(20_000 - LIMITS.PAGE_FILES).toLocaleString("en-US")} more not shown here`);
    const filesLink = `/files/${wide.taskIds[3]}`;
    expect(page.body).toContain(`href="${new URL(wide.shareUrl).pathname}${filesLink}"`);
    // The out-of-scope files are under "What needs you", counted whole (the card lists only the first files).
    expect(page.body).toMatch(
      /<section id="wf-review"[^>]*>(?:(?!<\/section>)[\s\S])*Sweep 3<\/a>: it changed [\d,]+ files? outside its declared areas: elsewhere\/m3\/file-\d+\.ts, /,
    );

    const blocks = await get(`${wide.shareUrl}/blocks`, "127.0.0.2");
    expect(blocks.status).toBe(200);
    expect(blocks.bytes).toBeLessThan(MAX_PAGE_BYTES);
    expect(blocks.headers["waymark-seq"]).toMatch(/^\d+$/);

    const files = await get(`${wide.shareUrl}${filesLink}`, "127.0.0.3");
    expect(files.status).toBe(200);
    expect(files.bytes).toBeLessThan(MAX_PAGE_BYTES);
    expect(files.body.match(/<tr class="file/g)?.length).toBe(LIMITS.FILES_PAGE);
    expect(files.body).toContain("files 1–1,000 of 20,000");
    const last = await get(`${wide.shareUrl}${filesLink}?from=19000`, "127.0.0.3");
    expect(last.body).toContain("files 19,001–20,000 of 20,000");
    expect(last.body.match(/<tr class="file/g)?.length).toBe(LIMITS.FILES_PAGE);
    expect(last.body).not.toContain(">Next files<");
    const past = await get(`${wide.shareUrl}${filesLink}?from=20000`, "127.0.0.3");
    expect(past.body).toContain("No files on this page.");
  }, 120_000);

  it("refuses positions it did not give out, by name, and shows nothing of another workflow", async () => {
    const other = await smallLink("Someone else's");
    const otherTask = /<li class="task" id="([^"]+)"/.exec((await get(other, "127.0.0.4")).body)?.[1] ?? "";
    expect(otherTask).not.toBe("");
    const forged = Buffer.from(JSON.stringify({ v: 1, after: otherTask })).toString("base64url");
    for (const [query, rule] of [
      ["?after=%00", /^INPUT_VALIDATION_ERROR: after: must be a cursor/],
      [`?after=${"A".repeat(600)}`, /^INPUT_VALIDATION_ERROR: after: must be a cursor/],
      [`?after=${forged}`, /^INPUT_VALIDATION_ERROR: after: names no task of this workflow/],
    ] as const) {
      const refused = await get(`${wide.shareUrl}${query}`, "127.0.0.4");
      expect(refused.status, query).toBe(400);
      expect(refused.body, query).toMatch(rule);
    }
    const badFrom = await get(`${wide.shareUrl}/files/${wide.taskIds[0]}?from=-1`, "127.0.0.4");
    expect([badFrom.status, badFrom.body]).toEqual([400, expect.stringMatching(/^INPUT_VALIDATION_ERROR: from: /)]);
    // Another workflow's task through this link: not found, nothing of it shown.
    const foreign = await get(`${wide.shareUrl}/files/${otherTask}`, "127.0.0.4");
    expect(foreign.status).toBe(404);
    expect(foreign.body).not.toContain("One task");
  }, 60_000);

  it("limits one client's reads (20 per 10 s), then a link's across clients (600 a minute); other links go on", async () => {
    const first = await smallLink("Limited per client");
    const other = await smallLink("Another link");
    let refusedAt = -1;
    let retryAfter: unknown;
    let otherLink: [number, number] = [0, 0];
    for (let i = 0; i < 300 && refusedAt < 0; i++) {
      const got = await get(`${first}/blocks`, "127.0.0.10");
      if (got.status === 429) {
        refusedAt = i;
        retryAfter = got.headers["retry-after"];
        expect(got.body).toMatch(/^QUOTA_EXCEEDED: too many reads/);
        // The same client reading another link is refused too (the budget is the client's), while
        // another client reads it: asked at once, before the 10 s window can turn over.
        otherLink = [(await get(other, "127.0.0.10")).status, (await get(other, "127.0.0.11")).status];
      } else expect(got.status).toBe(200);
    }
    // 20 per 10 s (on a slow machine a window or two may turn over during the loop).
    expect(refusedAt).toBeGreaterThanOrEqual(20);
    expect(refusedAt).toBeLessThanOrEqual(60);
    expect(retryAfter).toBe("10");
    expect(otherLink).toEqual([429, 200]);

    // Many clients, each under its own budget, still exhaust one link's: 8 at a time, 15 reads each.
    const crowded = await smallLink("Limited per link");
    let reads = 0;
    let linkRefusedAt = -1;
    // Asked the moment the link is first refused: on a slow machine the minute may turn over
    // before the batch ends, and a fresh client would then be answered by right.
    let freshClient: Promise<[number, number]> | undefined;
    for (let batch = 0; batch < 20 && linkRefusedAt < 0; batch++) {
      await Promise.all(
        Array.from({ length: 8 }, async (_, k) => {
          const from = `127.0.1.${batch * 8 + k + 1}`;
          for (let i = 0; i < 15; i++) {
            const got = await get(`${crowded}/blocks`, from);
            if (got.status === 429 && linkRefusedAt < 0) {
              linkRefusedAt = reads;
              // A fresh client of that link is refused too, while another link answers it.
              freshClient = (async () => [(await get(crowded, "127.0.2.1")).status, (await get(other, "127.0.2.1")).status])();
            }
            reads++;
          }
        }),
      );
    }
    expect(linkRefusedAt).toBeGreaterThanOrEqual(600);
    expect(linkRefusedAt).toBeLessThanOrEqual(1800);
    expect(await freshClient).toEqual([429, 200]);
  }, 400_000);

  it("limits exports (whole workflows): a client's share of a link, 5 a minute; a link's, 20; a client's, 20", async () => {
    /** Exports of `link` from `from` until one is refused (429, a minute to wait): how many were served, at most `most`. */
    async function servedUntilRefused(link: string, from: string, most: number): Promise<number> {
      for (let i = 0; i < most; i++) {
        const got = await get(`${link}/export.md`, from);
        if (got.status === 429) {
          expect(got.headers["retry-after"]).toBe("60");
          return i;
        }
        expect(got.status).toBe(200);
      }
      return most;
    }
    const [share, byClients, acrossLinks] = await withinOneMinute(async () => {
      const link = await smallLink(`Exported ${Date.now()}`);
      // One client, then more, each until refused: the link's budget spent share by share.
      const shares: number[] = [];
      while (shares.at(-1) !== 0 && shares.length < 10) shares.push(await servedUntilRefused(link, newReaderAddress(), 10));
      // One client across links: its own budget, whatever each link has left.
      const reader = newReaderAddress();
      const perLink: number[] = [];
      while (perLink.at(-1) !== 0 && perLink.length < 6)
        perLink.push(await servedUntilRefused(await smallLink(`Exported too ${Date.now()} ${perLink.length}`), reader, 5));
      return [shares[0], shares, perLink] as const;
    });
    expect(share).toBe(5);
    expect(byClients).toEqual([5, 5, 5, 5, 0]);
    expect(acrossLinks).toEqual([5, 5, 5, 5, 0]);
  }, 180_000);
});
