import { spawnSync } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Client } from "@modelcontextprotocol/client";
import Ajv2020 from "ajv/dist/2020.js";
import type { Locator, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { cleanupTempDirs, tempDir } from "../../client-helper/test/fixtures";
import { BIN, ensureBuilt, SYSTEM_NODE } from "../../client-helper/test/support";
import { agentWriteToken } from "../support/agents";
import { connect, ok } from "../support/mcp-client";
import { skipBrowser, useServerAndBrowser } from "./browser";

/**
 * A reviewed workflow's export, checked as an auditor would: reviewers approve a task and ask for
 * changes on an issue by clicking the owner view in Chromium, the agent receives the feedback,
 * then a read-only token downloads the export. It validates against the published JSON Schema,
 * `waymark verify` passes it with the totals rebuilt from the verdicts, and names what it does
 * not cover (when the agent received the feedback). The page names the signing key.
 */
describe.skipIf(skipBrowser)("a reviewed workflow's export", () => {
  const env = useServerAndBrowser();
  let agent: Client;
  /** What the agent recorded: the workflow, its task and issue asking for review, and a task left open. */
  const ids = { workflow: "", task: "", issue: "", open: "" };

  beforeAll(async () => {
    ensureBuilt();
    // The agent holds a write token of its own: the owner's verdicts on its tasks then count.
    const agentToken = (await agentWriteToken(env.server(), "reviewed-export agent")).token;
    agent = await connect({ url: env.server().url, token: agentToken }, { name: "reviewed-export-agent", negotiation: "auto" });
    ids.workflow = String((await ok(agent, "start_workflow", { name: "Rounding rules" })).workflow_id);
    ids.task = String((await ok(agent, "start_task", { workflow_id: ids.workflow, name: "Round", goal: "Half-even" })).task_id);
    ids.issue = String(
      (
        await ok(agent, "log_issue", {
          task_id: ids.task,
          type: "other",
          description: "Differs from accounting",
          resolution: "Rounded half-even",
          requires_human_review: true,
        })
      ).id,
    );
    await ok(agent, "complete_task", {
      task_id: ids.task,
      status: "success",
      outcome: { summary: "Half-even rounding", manual_review_needed: true, manual_review_reason: "Money" },
      changes: { type: "checksum", transitions: [{ path: "src/round.ts", before: null, after: { mode: "100644", blob: "a".repeat(40) } }] },
    });
    ids.open = String((await ok(agent, "start_task", { workflow_id: ids.workflow, name: "Next", goal: "More" })).task_id);
  });
  afterAll(async () => {
    await agent?.close();
    cleanupTempDirs();
  });

  async function submit(page: Page, button: Locator): Promise<number> {
    const [response] = await Promise.all([page.waitForResponse((r) => r.request().method() === "POST"), button.click()]);
    await page.waitForLoadState("load");
    return response.status();
  }

  it("validates, verifies with the reviews rebuilt from the verdicts, and its page names the signing key", async () => {
    const { url, token } = env.server();
    const keys = (await (await fetch(`${url}/.well-known/waymark-signing-keys.json`)).json()) as { keys: { kid: string }[] };
    const context = await env.browser().newContext({ viewport: { width: 1280, height: 900 } });
    const page = await context.newPage();
    await page.goto(`${url}/login`);
    await page.fill('input[name="token"]', token);
    expect(await submit(page, page.locator('button[type="submit"]'))).toBe(303);
    await page.goto(`${url}/w/${ids.workflow}`);
    expect(await page.locator("#wf-chain").innerText()).toContain(`signed with key ${keys.keys[0]?.kid}`);

    // Each item reviewed where it is listed, in place.
    for (const [id, body, verdict, said] of [
      [ids.task, "Rounding is right.", "Approve", "Approval recorded."],
      [ids.issue, "Match the accounting export.", "Request changes", "Request for changes recorded."],
    ] as const) {
      const item = page.locator(`#wf-review li[id="nr-${id}"]`);
      await item.locator("summary").click();
      await item.locator("textarea").fill(body);
      await item.locator("button", { hasText: verdict }).click();
      await expect.poll(() => page.locator("#wf-announce").innerText(), { timeout: 20_000 }).toBe(said);
    }
    await context.close();
    // The agent's next call carries the feedback: it is now marked delivered.
    const next = await ok(agent, "log_milestone", { task_id: ids.open, message: "Reading feedback" });
    expect(next.reviewer_feedback).toBeDefined();

    const created = await fetch(`${url}/api/tokens`, {
      method: "POST",
      headers: { Authorization: `Bearer ${token}`, "Content-Type": "application/json" },
      body: JSON.stringify({ name: "auditor", scopes: ["read"] }),
    });
    const readToken = String(((await created.json()) as { token: string }).token);
    const exported = await fetch(`${url}/api/workflows/${ids.workflow}/export.json`, { headers: { Authorization: `Bearer ${readToken}` } });
    expect(exported.status).toBe(200);
    const text = await exported.text();
    const doc = JSON.parse(text) as { feedback: { delivered_at: string | null }[]; totals: { reviews_needed: number } };
    expect(doc.feedback.map((f) => f.delivered_at)).toEqual([expect.any(String), expect.any(String)]);
    // The task's review is approved, the issue's is not.
    expect(doc.totals.reviews_needed).toBe(1);

    const schema = JSON.parse(readFileSync(join(__dirname, "../../docs/schemas/export-v1.json"), "utf8")) as object;
    const validate = new Ajv2020({ allErrors: true, strict: true, allowUnionTypes: true }).compile(schema);
    expect(validate(doc), JSON.stringify(validate.errors, null, 2)).toBe(true);

    ensureBuilt();
    const file = join(tempDir("waymark-export-"), "export.json");
    writeFileSync(file, text);
    const run = spawnSync(SYSTEM_NODE, [BIN, "verify", file, "--endpoint", url], { encoding: "utf8" });
    expect(run.status, run.stderr).toBe(0);
    expect(run.stdout).toContain("1 issue, 1 milestone, the totals and 2 feedback items follow from the events");
    expect(run.stdout).toContain("not covered: feedback[].delivered_at: when the agent received each item is recorded without an event");
    expect(run.stdout).toContain("files: claimed by the client ×1");
  }, 120_000);
});
