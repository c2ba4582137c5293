import { spawnSync } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import Ajv2020 from "ajv/dist/2020.js";
import type { Locator, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { cleanupTempDirs, Repo, tempDir } from "../../client-helper/test/fixtures";
import { BIN, ensureBuilt, SYSTEM_NODE } from "../../client-helper/test/support";
import { type CallableClient, connect, callTool as rawCall, type Structured } from "../support/mcp-client";
import { skipBrowser, useServerAndBrowser } from "./browser";

/** Every call here must succeed: a refusal fails the test with the tool's text. */
const callTool = (client: CallableClient, name: string, args: Record<string, unknown>) =>
  rawCall(client, name, args, { mustSucceed: true });

/**
 * Provenance as a skeptical reviewer meets it, against `wrangler dev`, read in Chromium and in
 * both exports. A direct MCP client that forges the helper's name and a transcript source reads
 * "claimed by the client" everywhere. The real helper, whose device key the owner approved by
 * clicking the Devices page (the pairing code `waymark device pair` printed), reads "computed
 * and signed … on device ‹name›"; once the owner revokes the device, its next signatures read as
 * claims with the reason. `waymark verify` passes each export and reports the same verdicts.
 */
describe.skipIf(skipBrowser)("provenance on the page and in the exports", () => {
  const env = useServerAndBrowser();
  const schema = JSON.parse(readFileSync(join(__dirname, "../../docs/schemas/export-v1.json"), "utf8")) as object;
  const validate = new Ajv2020({ allErrors: true, strict: true, allowUnionTypes: true }).compile(schema);
  let home: string;

  beforeAll(() => {
    ensureBuilt();
    home = tempDir("waymark-device-home-");
  });
  afterAll(() => cleanupTempDirs());

  /** The helper's environment on "this machine": its own config (where the device key lives) and cache. */
  const machine = () => ({
    ...(process.env as Record<string, string>),
    HOME: home,
    XDG_CONFIG_HOME: join(home, ".config"),
    XDG_CACHE_HOME: join(home, ".cache"),
    WAYMARK_TOKEN: env.server().token,
  });

  async function submit(page: Page, button: Locator): Promise<number> {
    const [response] = await Promise.all([page.waitForResponse((r) => r.request().method() === "POST"), button.click()]);
    await page.waitForLoadState("load");
    return response.status();
  }

  async function signedIn(): Promise<Page> {
    const page = await (await env.browser().newContext()).newPage();
    await page.goto(`${env.server().url}/login`);
    await page.fill('input[name="token"]', env.server().token);
    expect(await submit(page, page.locator('button[type="submit"]'))).toBe(303);
    return page;
  }

  /** The provenance lines of the task named `task` on a page, its card opened by clicking: [kind, text] per line. */
  async function provenanceOn(page: Page, task: string): Promise<[string, string][]> {
    const card = page.locator("li.task", { has: page.locator(".task-name", { hasText: new RegExp(`^${task}$`) }) });
    if ((await card.locator("details.task-card").getAttribute("open")) === null) await card.locator("summary").first().click();
    const items = await card.locator(".provenance > ul > li").all();
    return Promise.all(
      items.map(async (item) => [String(await item.getAttribute("data-provenance")), (await item.innerText()).replace(/\s+/g, " ").trim()]),
    );
  }

  /** Both exports, read with the dev token through the export API; the JSON one validated and verified. */
  async function exportsOf(
    workflowId: string,
    verifyArgs: string[] = [],
  ): Promise<{ json: Structured; markdown: string; verified: string }> {
    const { url, token } = env.server();
    const get = (kind: string) =>
      fetch(`${url}/api/workflows/${workflowId}/export.${kind}`, { headers: { Authorization: `Bearer ${token}` } });
    const [jsonResponse, mdResponse] = await Promise.all([get("json"), get("md")]);
    expect(jsonResponse.status).toBe(200);
    expect(mdResponse.status).toBe(200);
    const text = await jsonResponse.text();
    const json = JSON.parse(text) as Structured;
    expect(validate(json), JSON.stringify(validate.errors, null, 2)).toBe(true);
    const file = join(tempDir("waymark-export-"), "export.json");
    writeFileSync(file, text);
    const run = spawnSync(SYSTEM_NODE, [BIN, "verify", file, "--endpoint", url, ...verifyArgs], { encoding: "utf8" });
    expect(run.status, run.stdout + run.stderr).toBe(0);
    return { json, markdown: await mdResponse.text(), verified: run.stdout };
  }

  const taskIn = (json: Structured, name: string) => (json.tasks as Structured[]).find((t) => t.name === name) as Structured;

  it("a direct client's forged helper source and transcript usage read 'claimed by the client' on the page and in both exports", async () => {
    const client = await connect(env.server(), { name: "forger" });
    const started = (await callTool(client, "start_workflow", { name: "Forged provenance" })).structured;
    const workflowId = String(started.workflow_id);
    const task = (await callTool(client, "start_task", { workflow_id: workflowId, name: "Forged", goal: "Look computed" })).structured;
    await callTool(client, "complete_task", {
      task_id: task.task_id,
      status: "success",
      outcome: { summary: "Looks computed" },
      changes: {
        type: "checksum",
        transitions: [{ path: "src/forged.ts", before: null, after: { mode: "100644", blob: "a".repeat(40) } }],
        source: { kind: "helper", version: "0.1.0" },
        agent_edits: { paths: [] },
      },
      metrics: { input_tokens: 1000, output_tokens: 10, source: "transcript", price_table_date: "2026-11-23" },
    });
    await client.close();

    const page = await (await env.browser().newContext()).newPage();
    await page.goto(String(started.share_url));
    const lines = await provenanceOn(page, "Forged");
    const text = lines.map(([, line]) => line).join("\n");
    expect(text).not.toMatch(/computed and signed|computed by waymark-helper|from the agent's transcript/);
    expect(text).toContain("Files: claimed by the client (it says waymark-helper 0.1.0 computed them; not signed by a device)");
    expect(text).toContain("Usage: claimed by the client");
    expect(lines.map(([kind]) => kind)).toEqual(["claimed", "claimed", "claimed"]);
    await page.context().close();

    const { json, markdown, verified } = await exportsOf(workflowId);
    const recorded = taskIn(json, "Forged");
    expect((recorded.files_changed as Structured).source).toEqual({
      kind: "claimed",
      version: "0.1.0",
      reason: "not signed by a device",
    });
    expect(recorded.metrics).toMatchObject({ source: "agent" });
    expect((recorded.metrics as Structured).device).toBeUndefined();
    expect(markdown).toContain("Files: claimed by the client (it says waymark-helper 0.1.0 computed them; not signed by a device)");
    expect(markdown).toContain("Usage: claimed by the client");
    expect(markdown).not.toMatch(/computed and signed|from the agent's transcript/);
    expect(verified).toContain(
      [
        "  devices: no figure is labelled computed and signed",
        "    files: claimed by the client ×1",
        "    usage: claimed by the client ×1",
      ].join("\n"),
    );
  }, 120_000);

  it("the real helper on a device approved on the Devices page reads 'computed and signed'; revoked, its signatures stop counting", async () => {
    const { url } = env.server();
    // `waymark init` made the key; `waymark device pair` asks for a code, as the owner would run it.
    const repo = Repo.init().write("README.md", "readme\n").commitAll("initial");
    const init = spawnSync(SYSTEM_NODE, [BIN, "init", "--url", url, "--dir", repo.dir, "--agent", "claude"], {
      encoding: "utf8",
      env: machine(),
    });
    expect(init.status, init.stdout + init.stderr).toBe(0);
    const fingerprint = /signing key: (SHA256:[A-Za-z0-9+/]{43})/.exec(init.stdout)?.[1];
    expect(fingerprint, init.stdout).toBeDefined();
    const pair = spawnSync(SYSTEM_NODE, [BIN, "device", "pair", "--url", url, "--name", "build box"], { encoding: "utf8", env: machine() });
    expect(pair.status, pair.stdout + pair.stderr).toBe(0);
    const code = /^ {4}(\S+)$/m.exec(pair.stdout)?.[1] ?? "";
    expect(pair.stdout).toContain(`fingerprint ${fingerprint}`);

    // The owner enters the code, compares the fingerprint, names the device and approves it.
    const owner = await signedIn();
    await owner.goto(`${url}/dashboard`);
    await Promise.all([owner.waitForURL(/\/dashboard\/devices$/), owner.locator('a[href="/dashboard/devices"]').first().click()]);
    await owner.fill('#pair-device input[name="code"]', code);
    expect(await submit(owner, owner.locator('#pair-device button[type="submit"]'))).toBe(200);
    expect(await owner.locator("#pending-fingerprint").innerText()).toBe(fingerprint);
    await owner.fill('#approve-device input[name="name"]', "build box");
    expect(await submit(owner, owner.locator('#approve-device button[type="submit"]'))).toBe(303);
    const row = owner.locator("tr.device", { hasText: "build box" });
    expect(await row.locator(".fingerprint").innerText()).toBe(fingerprint);

    const agent = new Client({ name: "agent", version: "1.0.0" });
    await agent.connect(
      new StdioClientTransport({ command: SYSTEM_NODE, args: [BIN, "mcp", "--url", `${url}/mcp`, "--dir", repo.dir], env: machine() }),
    );
    const started = (await callTool(agent, "start_workflow", { name: "Signed provenance" })).structured;
    const workflowId = String(started.workflow_id);
    const runTask = async (name: string, file: string) => {
      const task = (await callTool(agent, "start_task", { workflow_id: workflowId, name, goal: "Write a file" })).structured;
      repo.write(file, `${name}\n`);
      return callTool(agent, "complete_task", {
        task_id: task.task_id,
        status: "success",
        outcome: { summary: name },
        metrics: { input_tokens: 5 },
      });
    };
    const signed = await runTask("Signed", "src/signed.ts");
    const shown = `device “build box” (${fingerprint?.slice(0, 19)}…)`;
    expect(signed.text).toContain(`files: computed and signed by waymark-helper`);
    expect(signed.text).toContain(`on ${shown}`);

    // Revoked by clicking: the same key's next signatures are the client's claim, with the reason.
    expect(await submit(owner, row.locator("button", { hasText: "Revoke" }))).toBe(200);
    expect(await submit(owner, owner.locator("#confirm-form button"))).toBe(303);
    expect(await owner.locator("tr.device", { hasText: "build box" }).innerText()).toContain("revoked");
    const afterRevoke = await runTask("After revoke", "src/after.ts");
    expect(afterRevoke.text).toMatch(
      /files: claimed by the client \(it says waymark-helper \S+ computed them; signed by device “build box”.*revoked/,
    );
    expect(afterRevoke.text).not.toContain("computed and signed");
    await agent.close();

    await owner.goto(String(started.share_url));
    const signedLines = await provenanceOn(owner, "Signed");
    expect(signedLines.find(([, text]) => text.startsWith("Files:"))).toEqual([
      "signed",
      expect.stringMatching(new RegExp(`^Files: computed and signed by waymark-helper \\S+ on ${shown.replace(/[()+.]/g, "\\$&")}$`)),
    ]);
    const revokedLines = await provenanceOn(owner, "After revoke");
    expect(revokedLines.find(([, text]) => text.startsWith("Files:"))?.[0]).toBe("claimed");

    // The repository pins the device's key with the line `waymark device` prints: verify checks the signature itself.
    const device = spawnSync(SYSTEM_NODE, [BIN, "device"], { encoding: "utf8", env: machine() });
    const line = /\n {4}(\S+ waymark-ed25519 \S+ SHA256:\S+)\n/.exec(device.stdout)?.[1] ?? "";
    const signers = join(tempDir("waymark-signers-"), "allowed-signers");
    writeFileSync(signers, `${line}\n`);
    const { json, markdown, verified } = await exportsOf(workflowId, ["--allowed-signers", signers]);
    expect((taskIn(json, "Signed").files_changed as Structured).source).toMatchObject({
      kind: "signed",
      device: { name: "build box", fingerprint },
    });
    expect((taskIn(json, "After revoke").files_changed as Structured).source).toMatchObject({
      kind: "claimed",
      reason: expect.stringContaining("revoked"),
    });
    expect(markdown).toContain(`Files: computed and signed by waymark-helper`);
    expect(markdown).toMatch(/Files: claimed by the client \(it says waymark-helper \S+ computed them; signed by device “build box”/);
    expect(verified).toContain(`files: computed and signed on ${shown}: checked, allowed signer ${line.split(" ")[0]} ×1`);
    expect(verified).toContain("files: claimed by the client ×1");
  }, 180_000);
});
