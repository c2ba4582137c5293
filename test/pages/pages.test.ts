import { env, listDurableObjectIds } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { LIMITS } from "../../src/limits";
import { EXPANDED_TASKS } from "../../src/pages/timeline";
import { clockPast } from "../support/eventually";
import { TOKENS, workerFetch } from "../support/worker";
import { recordFullWorkflow, toolCaller } from "./fixture";

const ORIGIN = "http://localhost";
const acme = toolCaller(workerFetch, `${ORIGIN}/mcp`, TOKENS.acme);
const path = (url: string) => new URL(url).pathname;

async function shareApi(id: string, body: unknown, token: string = TOKENS.acme, headers: Record<string, string> = {}) {
  const response = await workerFetch(`${ORIGIN}/api/workflows/${id}/share`, {
    method: "POST",
    headers: { Authorization: `Bearer ${token}`, "Content-Type": "application/json", ...headers },
    body: JSON.stringify(body),
  });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

describe("share links", () => {
  it("start_workflow returns an unguessable share_url that opens the page", async () => {
    const wf = await acme("start_workflow", { name: "Shared" });
    const url = String(wf.share_url);
    expect(url).toMatch(new RegExp(`^${ORIGIN}/s/sh_${String(wf.workflow_id).slice(3)}_[a-z2-7]{8}_[a-z2-7]{26}$`));
    const page = await workerFetch(url);
    expect(page.status).toBe(200);
    expect(await page.text()).toContain("Shared");
  });

  it("a token grants one workflow only: a forged or foreign token is 404 and shows no data", async () => {
    const a = await acme("start_workflow", { name: "Workflow A secret" });
    const b = await acme("start_workflow", { name: "Workflow B" });
    const tokenA = path(String(a.share_url)).slice(3);
    const secretPartA = tokenA.slice(-35);
    // B's routing part with A's secret part: must not open either.
    const forged = `sh_${String(b.workflow_id).slice(3)}_${secretPartA}`;
    for (const token of [
      forged,
      "sh_aaaaaaaaaaaaaaaaaaaa_bbbbbbbb_cccccccccccccccccccccccccc",
      "not-a-token",
      `${tokenA}x`,
      `${tokenA.slice(0, -1)}${tokenA.endsWith("a") ? "b" : "a"}`,
    ]) {
      const response = await workerFetch(`${ORIGIN}/s/${token}`);
      expect(response.status).toBe(404);
      const body = await response.text();
      expect(body).toContain("no longer shared");
      expect(body).not.toContain("Workflow");
    }
    // A share token is not a bearer token.
    const mcp = await workerFetch(`${ORIGIN}/mcp`, {
      method: "POST",
      headers: { Authorization: `Bearer ${tokenA}`, "Content-Type": "application/json" },
      body: "{}",
    });
    expect(mcp.status).toBe(401);
    const api = await shareApi(String(a.workflow_id), { action: "revoke" }, tokenA);
    expect(api.status).toBe(401);
  });

  it("anonymous requests with made-up tokens create no Durable Object (checked before any storage)", async () => {
    const random = (n: number) =>
      Array.from(crypto.getRandomValues(new Uint8Array(n)), (b) => "abcdefghijklmnopqrstuvwxyz234567"[b & 31]).join("");
    const before = (await listDurableObjectIds(env.WORKFLOW)).length;
    for (let i = 0; i < 30; i++) {
      // Both the shape of today's tokens and the older two-part shape.
      for (const token of [`sh_${random(20)}_${random(8)}_${random(26)}`, `sh_${random(20)}_${random(32)}`]) {
        for (const suffix of ["", "/export.json", "/export.md", "/blocks"]) {
          expect((await workerFetch(`${ORIGIN}/s/${token}${suffix}`)).status).toBe(404);
        }
      }
    }
    expect((await listDurableObjectIds(env.WORKFLOW)).length).toBe(before);
  });

  it("refuses an oversized share-API body before parsing it", async () => {
    const wf = await acme("start_workflow", { name: "Body cap" });
    const response = await workerFetch(`${ORIGIN}/api/workflows/${String(wf.workflow_id)}/share`, {
      method: "POST",
      headers: { Authorization: `Bearer ${TOKENS.acme}`, "Content-Type": "application/json" },
      body: JSON.stringify({ action: "rotate", padding: "x".repeat(64 * 1024) }),
    });
    expect(response.status).toBe(413);
    expect(await response.json()).toEqual({ code: "PAYLOAD_TOO_LARGE", message: "body: must be at most 8192 bytes" });
  });

  it("the owner rotates, sets an expiry and revokes; old links stop working", async () => {
    const wf = await acme("start_workflow", { name: "Rotate me" });
    const id = String(wf.workflow_id);
    const first = String(wf.share_url);
    const rotated = await shareApi(id, { action: "rotate", expires_in_seconds: 3600 });
    expect(rotated.status).toBe(200);
    expect(rotated.body.status).toBe("active");
    expect(rotated.body.share_url).not.toBe(first);
    expect(Date.parse(String(rotated.body.expires_at)) - Date.now()).toBeGreaterThan(3500_000);
    expect((await workerFetch(first)).status).toBe(404);
    expect((await workerFetch(String(rotated.body.share_url))).status).toBe(200);
    const noExpiry = await shareApi(id, { action: "set_expiry", expires_in_seconds: null });
    expect(noExpiry.body.expires_at).toBeNull();
    const revoked = await shareApi(id, { action: "revoke" });
    expect(revoked.body).toMatchObject({ status: "revoked", share_url: null });
    for (const suffix of ["", "/export.json", "/export.md", "/blocks"]) {
      const response = await workerFetch(`${rotated.body.share_url}${suffix}`);
      expect(response.status).toBe(410);
      expect(await response.text()).not.toContain("Rotate me");
    }
    // The live page asks with HEAD whether its link still works.
    expect((await workerFetch(`${rotated.body.share_url}/blocks`, { method: "HEAD" })).status).toBe(410);
  });

  it("an expired link shows the no-longer-shared page", async () => {
    const wf = await acme("start_workflow", { name: "Expiring" });
    const rotated = await shareApi(String(wf.workflow_id), { action: "rotate", expires_in_seconds: 1 });
    await clockPast(Date.parse(String(rotated.body.expires_at)));
    const response = await workerFetch(String(rotated.body.share_url));
    expect(response.status).toBe(410);
    expect(await response.text()).toContain("no longer shared");
  });

  it("only the owner manages a link; bad input names the field", async () => {
    const wf = await acme("start_workflow", { name: "Owned" });
    const id = String(wf.workflow_id);
    expect((await shareApi(id, { action: "revoke" }, TOKENS.globex)).status).toBe(404);
    expect((await shareApi(id, { action: "delete" })).body).toEqual({
      code: "INPUT_VALIDATION_ERROR",
      message: 'action: must be "rotate", "revoke" or "set_expiry"',
    });
    expect((await shareApi(id, { action: "rotate", expires_in_seconds: -5 })).body.message).toMatch(/^expires_in_seconds: /);
    expect((await shareApi(id, { action: "rotate", extra: 1 })).body.message).toBe("extra: unknown field");
    expect((await shareApi(id, { action: "revoke" }, TOKENS.acme, { Origin: "https://evil.example" })).status).toBe(403);
    expect((await workerFetch(String(wf.share_url))).status).toBe(200);
  });
});

describe("the page and exports", () => {
  it("render everything recorded, with security headers", async () => {
    const recorded = await recordFullWorkflow(acme, { complete: true });
    const response = await workerFetch(recorded.shareUrl);
    expect(response.status).toBe(200);
    const csp = response.headers.get("Content-Security-Policy") ?? "";
    for (const directive of [
      "default-src 'none'",
      "script-src 'nonce-",
      "style-src 'nonce-",
      "connect-src 'self'",
      "img-src 'self' data:",
      "base-uri 'none'",
      "form-action 'self'",
      "frame-ancestors 'none'",
    ]) {
      expect(csp).toContain(directive);
    }
    expect(csp).not.toContain("unsafe-inline");
    expect(response.headers.get("X-Content-Type-Options")).toBe("nosniff");
    expect(response.headers.get("Referrer-Policy")).toBe("no-referrer");
    const body = await response.text();
    const nonce = /script-src 'nonce-([^']+)'/.exec(csp)?.[1];
    // Every script and style element carries this response's nonce.
    expect(body.match(/<script/g)?.length).toBe(body.match(new RegExp(`<script nonce="${nonce?.replace(/[+/=]/g, "\\$&")}"`, "g"))?.length);
    for (const label of [
      "Workflow name",
      "Workflow description",
      "Plan step",
      "Plan goal",
      "Root task",
      "Root goal",
      "Subtask goal",
      "Decision question",
      "Option A",
      "Option B",
      "Decision reasoning",
      "Decision trade-offs",
      "Milestone message",
      "meta value",
      "Issue description",
      "Issue resolution",
      "Subtask summary",
      "Achievement",
      "Limitation",
      "Next step",
      "Review reason",
      "package-added",
      "package-removed",
      "npm test",
      "src/auth/jwt.ts",
      "src/auth/session.ts",
      "README.md",
      "src/auth/gone.ts",
      "src/auth/old-name.ts → src/auth/new-name.ts",
      "outside declared areas",
      "uncommitted",
      "What needs you",
      "needs human review",
      "Overlaps with concurrent tasks",
      "Workflow summary",
      "Workflow achievement",
      "Workflow limitation",
      "partial success",
      // The agent's claim, and that no hook observed its commands (a client without the helper).
      "<strong>Tests:</strong> claimed: tests passed (ran <code>npm test</code>) · not observed (no Waymark hook recorded this task&#39;s commands)",
    ]) {
      expect(body, label).toContain(label);
    }
    // The subtask is nested in its parent's timeline, after the decision the parent logged before starting it.
    const rootAt = body.indexOf(
      `<li class="task" id="${recorded.rootTaskId}" data-status="partial_success"><details class="task-card" open>`,
    );
    expect(rootAt).toBeGreaterThan(0);
    const timelineAt = body.indexOf(`<ol class="timeline" id="tl-${recorded.rootTaskId}">`);
    expect(body.indexOf('class="item decision"')).toBeGreaterThan(timelineAt);
    expect(body.indexOf(`id="${recorded.childTaskId}"`)).toBeGreaterThan(body.indexOf('class="item decision"'));
    // Status by a badge: a shape and a word, said as the agent's claim (never a verdict).
    expect(body).toContain(
      '<span class="badge st st-partial_success"><span class="shape" aria-hidden="true">◐</span> partial success <span class="claim">(claimed)</span></span>',
    );
    // README.md is outside the declared areas and left uncommitted, said in words; a rename is one
    // row of its task's files and one of What changed (the first screen's list across tasks).
    expect(body).toMatch(
      /<tr class="file out-of-scope"><td><span class="fs fs-M" aria-hidden="true" title="modified">M<\/span><span class="sr-only">modified<\/span><\/td><td class="path"><code>README\.md<\/code> <span class="tag">○ uncommitted<\/span> <span class="tag warn">⚠ outside declared areas<\/span>/,
    );
    expect(body.split("src/auth/old-name.ts").length - 1).toBe(2);
    const changed = body.slice(
      body.indexOf('<section id="wf-changed"'),
      body.indexOf("</section>", body.indexOf('<section id="wf-changed"')),
    );
    expect(changed.split("src/auth/old-name.ts").length - 1).toBe(1);
    // Times are <time> elements: UTC in the text and the title, the page script shows local time.
    expect(body).toMatch(
      /<time datetime="\d{4}-\d\d-\d\dT[\d:.]+Z" title="\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC">\d{4}-\d\d-\d\d \d\d:\d\d UTC<\/time>/,
    );
    // A finished workflow is not "live".
    expect(body).toContain('<span id="live" class="live" hidden>');
  });

  it("exports JSON (the WorkflowView) and Markdown", async () => {
    const recorded = await recordFullWorkflow(acme);
    const json = await workerFetch(`${recorded.shareUrl}/export.json`);
    expect(json.headers.get("Content-Type")).toContain("application/json");
    const view = (await json.json()) as {
      workflow: { id: string };
      tasks: unknown[];
      decisions: unknown[];
      issues: unknown[];
      milestones: unknown[];
      last_seq: number;
    };
    expect(view.workflow.id).toBe(recorded.workflowId);
    expect(view.tasks).toHaveLength(3);
    expect([view.decisions.length, view.issues.length, view.milestones.length]).toEqual([1, 1, 1]);
    const md = await (await workerFetch(`${recorded.shareUrl}/export.md`)).text();
    expect(md).toContain("## Workflow name");
    expect(md).toContain("### ⚠ Needs human review");
    expect(md).toContain("Review reason");
    // Paths verbatim in code spans, one table row each (@waymark/protocol/summary; rendering checked by cmark-gfm in client-helper/test/summary-gfm.test.ts).
    expect(md).toContain("| A | `src/auth/jwt.ts` |");
    expect(md).toMatch(/\| M \| `README\.md` \| +\| +\| uncommitted, \*\*⚠ outside declared areas\*\* \|/);
    expect(md).toContain("Decisions:\n- **Decision question** → Option A");
  });

  it("starts a long workflow with its finished tasks collapsed, open ones expanded", async () => {
    const wf = await acme("start_workflow", { name: "Long" });
    const id = String(wf.workflow_id);
    const done: string[] = [];
    for (let i = 0; i < EXPANDED_TASKS; i++) {
      const task = await acme("start_task", { workflow_id: id, name: `Done ${i}`, goal: "g" });
      await acme("complete_task", { task_id: task.task_id, status: "success", outcome: { summary: "s" } });
      done.push(String(task.task_id));
    }
    const before = await (await workerFetch(String(wf.share_url))).text();
    expect(before).toContain(`<li class="task" id="${done[0]}" data-status="success"><details class="task-card" open>`);
    const open = String((await acme("start_task", { workflow_id: id, name: "Still running", goal: "g" })).task_id);
    const after = await (await workerFetch(String(wf.share_url))).text();
    for (const taskId of done) expect(after).toContain(`<li class="task" id="${taskId}" data-status="success"><details class="task-card">`);
    expect(after).toContain(`<li class="task" id="${open}" data-status="in_progress"><details class="task-card" open>`);
  });

  it("renders a 500-task workflow quickly, a bounded page of tasks at a time", async () => {
    const wf = await acme("start_workflow", { name: "Big", plan: [{ step: "1", goal: "many tasks" }] });
    const id = String(wf.workflow_id);
    for (let i = 0; i < 500; i++) {
      const task = await acme("start_task", { workflow_id: id, name: `Task ${i}`, goal: `Goal ${i}`, areas: ["src"] });
      await acme("complete_task", {
        task_id: task.task_id,
        status: "success",
        outcome: { summary: `Summary ${i}`, achievements: ["a", "b"] },
        changes: {
          type: "checksum",
          transitions: [{ path: `src/file-${i}.ts`, before: null, after: { mode: "100644", blob: "a".repeat(40) } }],
        },
      });
    }
    const times: number[] = [];
    for (let run = 0; run < 5; run++) {
      const started = performance.now();
      const response = await workerFetch(String(wf.share_url));
      const body = await response.text();
      times.push(performance.now() - started);
      expect(body).toContain(`>Task ${LIMITS.PAGE_TASKS - 1}<`);
      expect(body).not.toContain(`>Task ${LIMITS.PAGE_TASKS}<`);
    }
    times.sort((a, b) => a - b);
    console.log(`500-task workflow, first page: median ${times[2]?.toFixed(1)} ms (${times.map((t) => t.toFixed(0)).join(", ")})`);
    expect(times[2]).toBeLessThan(1000);
    // "Next tasks" walks the rest, each task once, in order; the plan and totals are on every page.
    const seen: string[] = [];
    let next: string | null = String(wf.share_url);
    while (next !== null) {
      const body: string = await (await workerFetch(next)).text();
      expect(body).toContain("steps done by a task named after them on this page of the timeline");
      seen.push(...Array.from(body.matchAll(/class="task-name what">Task (\d+)</g), (m) => m[1] ?? ""));
      const link: string | undefined = /<a href="([^"]+\?after=[^"]+)">Next tasks<\/a>/.exec(body)?.[1];
      next = link === undefined ? null : new URL(link, String(wf.share_url)).href;
    }
    expect(seen).toEqual(Array.from({ length: 500 }, (_, i) => String(i)));
  }, 120_000);
});
