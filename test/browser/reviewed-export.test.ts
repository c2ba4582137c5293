import { spawnSync } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Client } from "@modelcontextprotocol/client";
import Ajv2020 from "ajv/dist/2020.js";
import type { Locator, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { cleanupTempDirs, tempDir } from "../../client-helper/test/fixtures";
import { BIN, ensureBuilt, SYSTEM_NODE } from "../../client-helper/test/support";
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
    agent = await connect(env.server(), { name: "reviewed-export-agent", negotiation: "auto" });
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

    await Promise.all([page.waitForURL(/\?on=/), page.click(`#wf-review a.review-link[href*="${ids.task}"]`)]);
    await page.check('#feedback input[name="verdict"][value="approved"]');
    await page.fill('#feedback textarea[name="body"]', "Rounding is right.");
    expect(await submit(page, page.locator('#feedback button[type="submit"]'))).toBe(303);
    await Promise.all([page.waitForURL(/\?on=/), page.click(`#wf-review a.review-link[href*="${ids.issue}"]`)]);
    await page.check('#feedback input[name="verdict"][value="changes_requested"]');
    await page.fill('#feedback textarea[name="body"]', "Match the accounting export.");
    expect(await submit(page, page.locator('#feedback button[type="submit"]'))).toBe(303);
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
