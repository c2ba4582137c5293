import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import type { TaskEntry } from "../../src/domain/view";
import { workflowBlocks } from "../../src/pages/page";
import { PagedReadError, taskEntries } from "../../src/pages/paged-reads";
import { htmlStream } from "../../src/pages/stream";
import { TOKENS, workerFetch } from "../support/worker";
import { recordFullWorkflow, toolCaller } from "./fixture";

const acme = toolCaller(workerFetch, "http://localhost/mcp", TOKENS.acme);

describe("the streamed page", () => {
  it("a read that fails halfway (a link revoked meanwhile) still ends in a whole page that says so", async () => {
    const recorded = await recordFullWorkflow(acme, { complete: true });
    const stub = env.WORKFLOW.get(env.WORKFLOW.idFromName(recorded.workflowId));
    const head = await stub.readHead("acme", false);
    if (!head.ok) throw new Error(head.message);
    async function* failingAfterOne(): AsyncGenerator<TaskEntry> {
      for await (const entry of taskEntries(stub, "acme")) {
        yield entry;
        throw new PagedReadError("UNAUTHORIZED", "share_token: this link was revoked");
      }
    }
    const body = await new Response(htmlStream(workflowBlocks(head.value, failingAfterOne()))).text();
    expect(body).toContain('id="wf-broken"');
    // Every task opened was closed, and the blocks after the timeline are there.
    expect(body.split('<li class="task"').length).toBe(2);
    expect(body.split("</details></li>").length).toBe(2);
    expect(body).toContain('id="wf-chain"');
  });

  it("streams the whole page for every task, as the page route serves it", async () => {
    const recorded = await recordFullWorkflow(acme, { complete: true });
    const response = await workerFetch(recorded.shareUrl);
    expect(response.headers.get("Content-Type")).toBe("text/html; charset=UTF-8");
    const body = await response.text();
    expect(body.split('<li class="task"').length - 1).toBe(3);
    expect(body.trimEnd().endsWith("</body></html>")).toBe(true);
  });
});
