import { createServer, type Server } from "node:http";
import { join } from "node:path";
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { getToolUiResourceUri } from "@modelcontextprotocol/ext-apps/app-bridge";
import { build } from "esbuild";
import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { launchChromium, skipBrowser } from "../support/chromium";
import { type DevServer, freePort } from "../support/dev-server";
import { sharedDevServer } from "../support/shared-server";

/**
 * The review app inside a chat client, end to end: `wrangler dev`, an MCP client that renders
 * MCP Apps (SDK v2, protocol 2026-07-28, declaring the extension) and acts as the agent, and a
 * host page in Chromium built from the extension SDK's AppBridge. The View is the `ui://`
 * resource the server links from start_workflow, served from another origin under the CSP the
 * extension requires of hosts for a resource that declares no domains. A reviewer sends feedback
 * from the View's form (a comment: verdicts count only from the page); the agent's next tool result carries it.
 */
const UI = "io.modelcontextprotocol/ui";
/** The extension's restrictive default CSP: what a host applies when the resource declares no domains. */
const DEFAULT_CSP =
  "default-src 'none'; script-src 'self' 'unsafe-inline'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; media-src 'self' data:; connect-src 'none'; frame-src 'none'; object-src 'none'; base-uri 'self'";

let server: DevServer;
let browser: Browser;
let client: Client;
const pages: Server[] = [];

async function serve(handler: (path: string) => { type: string; body: string; headers?: Record<string, string> }): Promise<string> {
  const port = await freePort();
  const page = createServer((request, response) => {
    const answer = handler(request.url ?? "/");
    response.writeHead(200, { "Content-Type": answer.type, ...answer.headers }).end(answer.body);
  });
  await new Promise<void>((ready) => page.listen(port, "127.0.0.1", ready));
  pages.push(page);
  return `http://127.0.0.1:${port}`;
}

describe.skipIf(skipBrowser)("the review app in a chat client (Chromium, ext-apps AppBridge)", () => {
  beforeAll(async () => {
    server = sharedDevServer();
    client = new Client(
      { name: "apps-host", version: "1" },
      { versionNegotiation: { mode: "auto" }, capabilities: { extensions: { [UI]: { mimeTypes: ["text/html;profile=mcp-app"] } } } },
    );
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${server.url}/mcp`), {
        requestInit: { headers: { Authorization: `Bearer ${server.token}` } },
      }),
    );
    browser = await launchChromium();
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await client?.close();
    for (const page of pages) page.close();
  });

  it("shows the workflow escaped, sends feedback from its form, and the agent gets it in its next tool result", async () => {
    const tools = (await client.listTools()).tools;
    const startTool = tools.find((t) => t.name === "start_workflow");
    const appUri = startTool ? getToolUiResourceUri(startTool) : undefined;
    expect(appUri).toBe("ui://waymark/review");

    // The agent's work, through the host's client.
    const hostile = `Billing <img src=x onerror="document.title='owned'">`;
    const input = { name: hostile };
    const started = await client.callTool({ name: "start_workflow", arguments: input });
    const workflowId = (started.structuredContent as { workflow_id: string }).workflow_id;
    const task = await client.callTool({
      name: "start_task",
      arguments: { workflow_id: workflowId, name: "Invoices", goal: "PDF invoices" },
    });
    const taskId = (task.structuredContent as { task_id: string }).task_id;
    await client.callTool({
      name: "log_issue",
      arguments: {
        task_id: taskId,
        type: "other",
        description: "Tax rounding differs",
        resolution: "Banker's rounding",
        requires_human_review: true,
      },
    });

    const resource = await client.readResource({ uri: appUri ?? "" });
    const view = resource.contents[0] as { text: string; mimeType: string; _meta?: { ui?: { csp?: unknown } } };
    expect(view.mimeType).toBe("text/html;profile=mcp-app");
    expect(view._meta?.ui?.csp).toBeUndefined();
    const viewOrigin = await serve(() => ({ type: "text/html", body: view.text, headers: { "Content-Security-Policy": DEFAULT_CSP } }));
    const bundle = await build({
      entryPoints: [join(import.meta.dirname, "app/host.mjs")],
      bundle: true,
      write: false,
      format: "esm",
      platform: "browser",
      logLevel: "silent",
    });
    const script = bundle.outputFiles[0]?.text ?? "";
    const hostOrigin = await serve((path) =>
      path === "/host.js"
        ? { type: "text/javascript", body: script }
        : { type: "text/html", body: `<!doctype html><title>host</title><body><script type="module" src="/host.js"></script></body>` },
    );

    const page = await browser.newPage();
    const problems: string[] = [];
    page.on("console", (message) => {
      if (message.type() === "error") problems.push(message.text());
    });
    page.on("pageerror", (error) => problems.push(error.message));
    // What the host forwards to the server it is connected to.
    await page.exposeFunction("waymarkRead", (params: { uri: string }) => client.readResource(params));
    await page.exposeFunction("waymarkCall", (params: { name: string; arguments?: Record<string, unknown> }) => client.callTool(params));
    await page.goto(hostOrigin);
    await page.waitForFunction(() => typeof (globalThis as unknown as { startApp?: unknown }).startApp === "function");
    await page.evaluate(
      ([url, args, result]) => (globalThis as unknown as { startApp: (...a: unknown[]) => Promise<void> }).startApp(url, args, result),
      [`${viewOrigin}/view`, input, started] as const,
    );

    const frame = page.frameLocator("#view");
    await expect.poll(() => frame.locator(".wf-name").textContent(), { timeout: 30_000 }).toBe(hostile);
    expect(await frame.locator("img").count()).toBe(0);
    expect(await frame.locator("#wf-review").textContent()).toContain("Tax rounding differs");

    await frame.locator('select[name="target"]').selectOption(`task:${taskId}`);
    // No verdict here: the server cannot tell a person in the app from the agent, and the app says so.
    expect(await frame.locator('input[name="verdict"][type="radio"]').count()).toBe(0);
    expect(await frame.locator("#feedback-verdicts").textContent()).toContain(
      "approvals and change requests count only from the workflow's page",
    );
    await frame.locator('textarea[name="body"]').fill("Round half to even, and say so in the PDF");
    await frame.locator("#feedback button").click();
    await expect
      .poll(() => frame.locator("#app-status").textContent(), { timeout: 30_000 })
      .toBe("Sent: the agent receives it in the result of its next tool call.");
    expect(await frame.locator("#wf-feedback").textContent()).toContain("Round half to even, and say so in the PDF");

    // The agent's next tool call carries it.
    const next = await client.callTool({ name: "log_milestone", arguments: { task_id: taskId, message: "PDFs render" } });
    const feedback = (next.structuredContent as { reviewer_feedback?: { items: { body: string; verdict: string }[] } }).reviewer_feedback;
    expect(feedback?.items).toEqual([expect.objectContaining({ body: "Round half to even, and say so in the PDF", verdict: "comment" })]);
    expect(await page.title()).toBe("host");
    expect(problems).toEqual([]);
    await page.close();
  }, 120_000);
});
