/**
 * The README followed by a newcomer, on a fresh clone, every step as written: `git clone`, `npm
 * install`, `npm start` (on a port of its own: `npm start -- --port N`), signing in with the
 * development token in Chromium, making a token with the `write` scope on the Tokens page by
 * clicking, `export WAYMARK_TOKEN=…`, `npx -y --package=<endpoint>/helper/latest waymark init --url
 * <endpoint>` (Claude Code found on the machine), the commit init prints, the alias it prints and
 * `waymark doctor` through it, `waymark device pair --name nu-laptop` and the device approved on
 * the Devices page by clicking, one task through the real helper as the agent runs it (the command
 * init wrote in `.mcp.json`), then `waymark summary`, and `waymark verify … --repo` on the export.
 *
 * Asserted: every command exits 0; nothing any of them prints is a stack trace or an npm warning;
 * no tracked file of the clone changed; the sign-in page says where a token comes from; the device
 * is named as asked; the agent's commit is decided by verify (no "undecided": init's files were
 * committed first, as init said). The clone is of this checkout's HEAD: what is committed is what
 * is tested, as in CI's fresh clone. It runs alone (vitest.config.ts: ALONE): it installs and builds
 * a checkout of its own and holds a port and Chromium for minutes (about 3 on 2 busy cores).
 */
import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { Client } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import type { Browser, Page } from "playwright-core";
import { afterAll, expect, it } from "vitest";
import { cleanupTempDirs, tempDir } from "../../client-helper/test/fixtures";
import { launchChromium, skipBrowser } from "../support/chromium";
import { freePort } from "../support/dev-server";
import { callTool } from "../support/mcp-client";

const ROOT = resolve(import.meta.dirname, "../..");
/** A line of a JavaScript stack trace, as Node prints one. */
const STACK_FRAME = /^\s+at .+:\d+:\d+\)?$/m;

let server: ChildProcess | null = null;
let browser: Browser | null = null;

afterAll(async () => {
  await browser?.close();
  if (server?.pid !== undefined) {
    try {
      process.kill(-server.pid, "SIGKILL");
    } catch {
      // Already gone.
    }
  }
  cleanupTempDirs();
});

/** The machine's PATH without this checkout's node_modules (whose Node 22 and tools are the test's, not the newcomer's). */
function machinePath(): string {
  return (process.env.PATH ?? "")
    .split(":")
    .filter((dir) => dir !== "" && !resolve(dir).startsWith(join(ROOT, "node_modules")))
    .join(":");
}

type Ran = { code: number | null; out: string };

/** One command line as the newcomer types it, in `sh` (the alias lines in `bash`, where aliases work); every output kept. */
function shell(line: string, options: { cwd: string; env: Record<string, string>; bash?: boolean }): Promise<Ran> {
  const [command, args] = options.bash ? ["bash", ["-c", `shopt -s expand_aliases\n${line}`]] : ["sh", ["-c", line]];
  return new Promise((done) => {
    const child = spawn(command, args as string[], { cwd: options.cwd, env: options.env, stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    child.stdout.on("data", (chunk) => (out += chunk));
    child.stderr.on("data", (chunk) => (out += chunk));
    child.on("close", (code) => done({ code, out }));
  });
}

/** Each documented command: exits 0 and prints no stack trace and no npm warning. */
function expectClean(step: string, ran: Ran): string {
  expect(ran.code, `${step}:\n${ran.out}`).toBe(0);
  expect(ran.out, `${step} printed a stack trace`).not.toMatch(STACK_FRAME);
  expect(ran.out, `${step} printed an npm warning`).not.toMatch(/npm (warn|WARN)|EBADENGINE/);
  return ran.out;
}

async function submit(page: Page, selector: string): Promise<number> {
  const [response] = await Promise.all([page.waitForResponse((r) => r.request().method() === "POST"), page.locator(selector).click()]);
  await page.waitForLoadState("load");
  return response.status();
}

it.skipIf(skipBrowser)(
  "the README on a fresh clone: install, start, sign in, a token, init, doctor, a named device approved, one task, summary",
  async () => {
    const work = tempDir("waymark-newcomer-");
    const clone = join(work, "waymark");
    const home = join(work, "home");
    mkdirSync(join(home, ".claude"), { recursive: true }); // Claude Code is installed on this machine.
    const npmCache = spawnSync("npm", ["config", "get", "cache"], { encoding: "utf8" }).stdout.trim();
    const env: Record<string, string> = {
      PATH: machinePath(),
      HOME: home,
      LANG: process.env.LANG ?? "C.UTF-8",
      // A machine that has used npm before: its package cache (the install is not a download test).
      npm_config_cache: npmCache,
      npm_config_update_notifier: "false",
      XDG_CACHE_HOME: join(home, ".cache"),
      XDG_CONFIG_HOME: join(home, ".config"),
    };
    const inClone = { cwd: clone, env };

    expectClean("git clone", await shell(`git clone -q ${JSON.stringify(ROOT)} ${JSON.stringify(clone)}`, { cwd: work, env }));
    expectClean("npm install", await shell("npm install", inClone));

    // npm start, on a port of its own; the address and token it prints are what the newcomer uses.
    const port = await freePort();
    let started = "";
    server = spawn("sh", ["-c", `npm start -- --port ${port} --inspector-port ${await freePort()}`], {
      ...inClone,
      detached: true,
      stdio: ["ignore", "pipe", "pipe"],
    });
    server.stdout?.on("data", (chunk) => (started += chunk));
    server.stderr?.on("data", (chunk) => (started += chunk));
    const endpoint = `http://127.0.0.1:${port}`;
    const deadline = Date.now() + 180_000;
    while (!/Ready on http/.test(started)) {
      expect(Date.now() < deadline, `npm start did not get ready:\n${started}`).toBe(true);
      expect(server.exitCode, `npm start ended:\n${started}`).toBeNull();
      await new Promise((r) => setTimeout(r, 300));
    }
    expect(started, "npm start printed a stack trace").not.toMatch(STACK_FRAME);
    const devToken = /Waymark dev token: (\S+)/.exec(started)?.[1] as string;
    expect(devToken).toBeDefined();

    // Signed in with the development token; a token with the write scope made on the Tokens page.
    browser = await launchChromium();
    const page = await (await browser.newContext()).newPage();
    await page.goto(`${endpoint}/login`);
    expect(await page.locator("#token-source").textContent()).toContain("the development token npm start prints");
    await page.fill('input[name="token"]', devToken);
    expect(await submit(page, 'button[type="submit"]')).toBe(303);
    await Promise.all([page.waitForURL(/\/dashboard\/tokens$/), page.locator('a[href="/dashboard/tokens"]').first().click()]);
    await page.fill('#create-token input[name="name"]', "nu-laptop agents");
    expect(await page.locator('#create-token input[name="scopes"][value="write"]').isChecked()).toBe(true);
    expect(await submit(page, '#create-token button[type="submit"]')).toBe(200);
    const token = (await page.locator("#new-token-secret").textContent()) ?? "";
    expect(token).toMatch(/^wmk_/);

    // The project, and the user's shell with the token exported.
    const project = join(work, "greeter");
    const user = { ...env, WAYMARK_TOKEN: token };
    const inProject = { cwd: project, env: user };
    mkdirSync(project);
    writeFileSync(join(project, "README.md"), "# Greeter\n");
    expectClean(
      "the project",
      await shell(
        'git init -q -b main && git config user.name Nu && git config user.email nu@example.com && git add -A && git commit -q -m "First"',
        inProject,
      ),
    );

    const init = expectClean(
      "waymark init",
      await shell(`npx -y --package=${endpoint}/helper/latest waymark init --url ${endpoint}`, inProject),
    );
    expect(init).toContain("Claude Code (found ~/.claude/): wrote .mcp.json, .claude/settings.json, CLAUDE.md");
    const commit = /^ {2}(git add .* && git commit -m "Set up Waymark")$/m.exec(init)?.[1] as string;
    expectClean("the commit init printed", await shell(commit, inProject));
    const alias = /^ {2}(alias waymark='.*')$/m.exec(init)?.[1] as string;
    expect(alias, init).toBeDefined();
    const waymark = (args: string) => shell(`${alias}\nwaymark ${args}`, { ...inProject, bash: true });

    const doctor = expectClean("waymark doctor", await waymark("doctor"));
    expect(doctor).toContain("All checks passed.");
    expect(doctor).toContain("ok   project files: what init wrote into the project is committed");

    // The device, named as asked, approved on the Devices page by clicking.
    const pair = expectClean("waymark device pair", await waymark("device pair --name nu-laptop"));
    expect(pair).toContain("This device: nu-laptop\n");
    const code = /^ {4}(\S+)$/m.exec(pair)?.[1] as string;
    const fingerprint = /Fingerprint: (SHA256:\S{43})/.exec(pair)?.[1] as string;
    await page.goto(`${endpoint}/dashboard`);
    await Promise.all([page.waitForURL(/\/dashboard\/devices$/), page.locator('a[href="/dashboard/devices"]').first().click()]);
    await page.fill('#pair-device input[name="code"]', code);
    expect(await submit(page, '#pair-device button[type="submit"]')).toBe(200);
    expect(await page.locator("#pending-fingerprint").textContent()).toBe(fingerprint);
    expect(await page.locator('#approve-device input[name="name"]').inputValue()).toBe("nu-laptop");
    expect(await submit(page, '#approve-device button[type="submit"]')).toBe(303);
    expect(await page.locator("tr.device", { hasText: "nu-laptop" }).locator(".fingerprint").textContent()).toBe(fingerprint);
    // The repository pins the device for `waymark verify`, with the line pairing printed.
    const signer = /^ {4}(nu-laptop waymark-ed25519 .*)$/m.exec(pair)?.[1] as string;
    mkdirSync(join(project, ".waymark"));
    writeFileSync(join(project, ".waymark", "allowed-signers"), `${signer}\n`);
    expectClean("pinning the device", await shell('git add .waymark && git commit -q -m "Pin nu-laptop"', inProject));

    // One task, through the helper as the agent starts it: the command init wrote in .mcp.json.
    const entry = (
      JSON.parse(readFileSync(join(project, ".mcp.json"), "utf8")) as { mcpServers: { waymark: { command: string; args: string[] } } }
    ).mcpServers.waymark;
    const agent = new Client({ name: "newcomer-agent", version: "1.0.0" });
    await agent.connect(new StdioClientTransport({ command: entry.command, args: entry.args, cwd: project, env: user, stderr: "pipe" }));
    const workflow = (await callTool(agent, "start_workflow", { name: "Greeter" })).structured;
    const task = (
      await callTool(agent, "start_task", { workflow_id: workflow.workflow_id, name: "Add a greeting", goal: "Greet", areas: ["src/**"] })
    ).structured;
    mkdirSync(join(project, "src"));
    writeFileSync(join(project, "src", "greeting.ts"), 'export const greeting = "Hello";\n');
    expectClean("the agent's commit", await shell('git add -A && git commit -q -m "Add a greeting"', inProject));
    const done = await callTool(
      agent,
      "complete_task",
      { task_id: task.task_id, status: "success", outcome: { summary: "Greets." } },
      { mustSucceed: true },
    );
    await agent.close();
    expect(done.text).toContain("src/greeting.ts");
    expect(done.text).toContain("computed and signed");
    expect(done.text).toContain("nu-laptop");

    // The PR summary, with the workflow's share link as it is now.
    const summary = expectClean("waymark summary", await waymark("summary"));
    expect(summary).toContain("## Greeter");
    expect(summary).toContain(`[Workflow page](<${workflow.share_url}>)`);
    expect(summary).toContain("Add a greeting");

    // The export, checked against the clone: the agent's commit is decided, nothing undecided.
    const exported = await fetch(`${endpoint}/api/workflows/${workflow.workflow_id}/export.json`, {
      headers: { Authorization: `Bearer ${token}` },
    });
    expect(exported.status).toBe(200);
    writeFileSync(join(work, "export.json"), await exported.text());
    const verified = expectClean("waymark verify", await waymark(`verify ${join(work, "export.json")} --endpoint ${endpoint} --repo .`));
    expect(verified).not.toMatch(/undecided/i);
    expect(verified).toMatch(/"Add a greeting": agrees/);

    // The clone is as it was cloned.
    expect(spawnSync("git", ["status", "--porcelain", "--untracked-files=no"], { cwd: clone, encoding: "utf8" }).stdout).toBe("");
    expect(started, "npm start printed a stack trace while serving").not.toMatch(STACK_FRAME);
  },
  900_000,
);
