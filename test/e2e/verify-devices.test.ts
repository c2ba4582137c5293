/**
 * "Computed and signed" checked where it is used: a device's helper (the real `waymark mcp`, its
 * key made by `waymark device`, approved through the API) records a task against a real
 * `wrangler dev`; the JSON export carries the payloads the device signed, and `waymark verify`
 * checks them offline against the line `waymark device` printed, put in an allowed-signers file
 * (given with a flag, or committed as the repository's .waymark/allowed-signers). Then the
 * deployment lies: it labels another task's files "computed and signed" (in the record and its
 * events, the chain recomputed, the statement signed again with its own key), or changes a signed
 * task's files: `waymark verify` refuses each, where before it took the server's word. Without
 * allowed signers, the labels are not checked, which is a failure unless --allow-unsigned.
 */
import { spawnSync } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { deviceText } from "@waymark/protocol/provenance-wording";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { cleanupTempDirs, Repo, tempDir } from "../../client-helper/test/fixtures";
import { BIN, ensureBuilt, SYSTEM_NODE } from "../../client-helper/test/support";
import { connectThroughHelper } from "../support/agents";
import type { DevServer } from "../support/dev-server";
import { type ForgedExport, rechain, resignAsDeployment } from "../support/export-forgery";
import { connect, ok, type Structured } from "../support/mcp-client";
import { sharedDevServer } from "../support/shared-server";

type Task = { id: string; files_changed: Record<string, unknown> & { source: Record<string, unknown>; added: string[] } };
type Doc = ForgedExport & { tasks: Task[]; device_signed: { task_id: string; message: { tool: string }; data: unknown }[] };

let server: DevServer;
let devToken: string;
let dir: string;
let cacheHome: string;

beforeAll(() => {
  ensureBuilt();
  server = sharedDevServer();
  // The deployment's own signing key is derived from its development token: a test playing a lying deployment signs with it.
  devToken = inject("sharedServer").accounts.find((a) => a.account === "dev")?.token ?? "";
  dir = tempDir("waymark-verify-devices-");
  cacheHome = tempDir("waymark-cache-");
});
afterAll(cleanupTempDirs);

function waymark(args: string[], cwd?: string) {
  const run = spawnSync(SYSTEM_NODE, [BIN, ...args], {
    cwd,
    encoding: "utf8",
    env: { ...(process.env as Record<string, string>), XDG_CACHE_HOME: cacheHome },
  });
  return { code: run.status, stdout: run.stdout, stderr: run.stderr };
}

let saved = 0;
function save(value: unknown): string {
  const file = join(dir, `export-${++saved}.json`);
  writeFileSync(file, typeof value === "string" ? value : JSON.stringify(value, null, 2));
  return file;
}

interface Recorded {
  repo: Repo;
  workflowId: string;
  signed: string;
  claimed: string;
  line: string;
  fingerprint: string;
  text: string;
  doc: Doc;
}

/**
 * This machine's device, paired the way an admin can (POST /api/devices with the key `waymark
 * device` printed), does one task through the real helper; a direct client, in the same workflow,
 * does another with changes of its own making (a claim). The export is downloaded with a read token.
 */
async function record(): Promise<Recorded> {
  const shown = waymark(["device", "--name", "ci box"]);
  expect(shown.code, shown.stderr).toBe(0);
  const key = /Public key: {2}(\S+)/.exec(shown.stdout)?.[1] ?? "";
  const fingerprint = /Fingerprint: (\S+)/.exec(shown.stdout)?.[1] ?? "";
  const line = /\n {4}(ci-box waymark-ed25519 \S+ SHA256:\S+)\n/.exec(shown.stdout)?.[1] ?? "";
  expect(line).toBe(`ci-box waymark-ed25519 ${key} ${fingerprint}`);
  const approved = await fetch(`${server.url}/api/devices`, {
    method: "POST",
    headers: { Authorization: `Bearer ${server.token}`, "Content-Type": "application/json" },
    body: JSON.stringify({ name: "ci box", key }),
  });
  expect(approved.status).toBe(201);

  const repo = Repo.init().write("src/a.ts", "a1\n").commitAll("initial");
  const agent = await connectThroughHelper(server, repo.dir, { cacheHome });
  const tool = (name: string, args: Structured) => ok(agent, name, args);
  const { workflow_id } = (await tool("start_workflow", { name: "Signed work" })) as { workflow_id: string };
  const signed = String((await tool("start_task", { workflow_id, name: "Edit a", goal: "a2", areas: ["src"] })).task_id);
  repo.write("src/a.ts", "a1\na2\n").write("src/new.ts", "n\n").commitAll("Edit a");
  const done = await tool("complete_task", { task_id: signed, status: "success", outcome: { summary: "a edited" } });
  expect((done.files_changed as { source: { kind: string } }).source.kind).toBe("signed");
  await agent.close();

  const direct = await connect(server);
  const claimed = String(
    (await ok(direct, "start_task", { workflow_id, name: "Claim b", goal: "b", snapshot: { type: "checksum", files: 0, digest: "x" } }))
      .task_id,
  );
  await ok(direct, "complete_task", {
    task_id: claimed,
    status: "success",
    outcome: { summary: "b claimed" },
    changes: { type: "checksum", transitions: [{ path: "src/b.ts", before: null, after: { mode: "100644", blob: "b".repeat(40) } }] },
  });
  await direct.close();

  const read = await fetch(`${server.url}/api/tokens`, {
    method: "POST",
    headers: { Authorization: `Bearer ${server.token}`, "Content-Type": "application/json" },
    body: JSON.stringify({ name: "auditor", scopes: ["read"] }),
  });
  const readToken = String(((await read.json()) as { token: string }).token);
  const response = await fetch(`${server.url}/api/workflows/${workflow_id}/export.json`, {
    headers: { Authorization: `Bearer ${readToken}` },
  });
  expect(response.status).toBe(200);
  const text = await response.text();
  return { repo, workflowId: workflow_id, signed, claimed, line, fingerprint, text, doc: JSON.parse(text) as Doc };
}

const taskOf = (doc: Doc, id: string) => doc.tasks.find((task) => task.id === id) as Task;

/** The same edit to a task in the record and in every event that carries it. */
function editTask(doc: Doc, id: string, edit: (task: Task) => void): void {
  edit(taskOf(doc, id));
  for (const event of doc.events)
    if (event.task_id === id && event.data.id === id && event.data.files_changed) edit(event.data as unknown as Task);
  rechain(doc);
}

describe("waymark verify checks the device signatures itself", () => {
  let recorded: Recorded;
  let signers: string;

  beforeAll(async () => {
    recorded = await record();
    signers = join(dir, "allowed-signers");
    writeFileSync(signers, `# the team's devices\n${recorded.line}\n`);
  }, 120_000);

  it("carries each payload the device signed, and checks them offline against the allowed signers", () => {
    const payloads = recorded.doc.device_signed;
    expect(payloads.map((p) => [p.task_id, p.message.tool])).toEqual([
      [recorded.signed, "start_task"],
      [recorded.signed, "complete_task"],
    ]);
    const file = save(recorded.text);
    const run = waymark(["verify", file, "--endpoint", server.url, "--allowed-signers", signers]);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toContain(
      `devices: each figure labelled computed and signed checked against 2 device-signed payloads and the allowed signers in ${signers}`,
    );
    expect(run.stdout).toContain(
      `files: computed and signed on ${deviceText({ name: "ci box", fingerprint: recorded.fingerprint })}: checked, allowed signer ci-box ×1`,
    );
    expect(run.stdout).toContain("files: claimed by the client ×1");
    expect(run.stdout).toContain("Each figure reported checked above was computed and signed by a device key in the allowed signers");

    // Committed with the code: .waymark/allowed-signers of the repository verify runs in.
    mkdirSync(join(recorded.repo.dir, ".waymark"), { recursive: true });
    writeFileSync(join(recorded.repo.dir, ".waymark", "allowed-signers"), `${recorded.line}\n`);
    const committed = waymark(["verify", file, "--endpoint", server.url], join(recorded.repo.dir, "src"));
    expect(committed.code, committed.stderr).toBe(0);
    expect(committed.stdout).toContain(`the allowed signers in ${join(recorded.repo.dir, ".waymark", "allowed-signers")}`);
  });

  it("without allowed signers, does not pass labels it could not check, unless told --allow-unsigned", () => {
    const file = save(recorded.text);
    const refused = waymark(["verify", file, "--endpoint", server.url]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain("devices: NOT CHECKED: figures are labelled computed and signed, but no allowed signers were given");
    expect(refused.stderr).toContain(
      `files: computed and signed on ${deviceText({ name: "ci box", fingerprint: recorded.fingerprint })} per the server: NOT CHECKED ×1`,
    );
    expect(refused.stderr).toContain("NOT OK: not everything could be checked");
    const accepted = waymark(["verify", file, "--endpoint", server.url, "--allow-unsigned"]);
    expect(accepted.code).toBe(0);
    expect(accepted.stdout).toContain("NOT CHECKED (accepted with --allow-unsigned)");
    expect(accepted.stdout).not.toMatch(/^ok:/m);
  });

  it("refuses a device that is not in the allowed signers, or outside the period they allow it", () => {
    const file = save(recorded.text);
    const other = join(dir, "other-signers");
    writeFileSync(other, "someone waymark-ed25519 AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA\n");
    const stranger = waymark(["verify", file, "--endpoint", server.url, "--allowed-signers", other]);
    expect(stranger.code).toBe(1);
    expect(stranger.stderr).toContain(`device key ${recorded.fingerprint} is not in the allowed signers`);
    const expired = join(dir, "expired-signers");
    writeFileSync(expired, recorded.line.replace("ci-box ", 'ci-box valid-before="20000101Z" '));
    const late = waymark(["verify", file, "--endpoint", server.url, "--allowed-signers", expired]);
    expect(late.code).toBe(1);
    expect(late.stderr).toContain("outside its allowed period (line 1: … to 20000101000000Z)");
  });

  it("refuses an export where the deployment labelled a claimed task 'computed and signed' and signed the record again", async () => {
    const doc = structuredClone(recorded.doc);
    const device = taskOf(doc, recorded.signed).files_changed.source.device;
    editTask(doc, recorded.claimed, (task) => {
      task.files_changed.source = { kind: "signed", version: "0.1.0", device };
    });
    await resignAsDeployment(doc, devToken);
    const file = save(doc);
    // The deployment's signature holds: only the device evidence gives it away.
    const run = waymark(["verify", file, "--endpoint", server.url, "--allowed-signers", signers]);
    expect(run.code).toBe(1);
    expect(run.stderr).toContain("signature: ok: signed");
    expect(run.stderr).toContain(
      `tasks[${recorded.claimed}].files_changed: labelled computed and signed, but the export carries no signed start snapshot for the task (device_signed)`,
    );
    expect(run.stderr).toContain("per the server: REFUSED (see below)");
    expect(run.stderr).toContain("NOT OK: this file is not the record the deployment wrote, or does not follow from it");

    // Moving the genuine payloads onto the claimed task does not help: they were signed for another task.
    const moved = structuredClone(doc);
    moved.device_signed = moved.device_signed.map((p) => ({ ...p, task_id: recorded.claimed }));
    await resignAsDeployment(moved, devToken);
    const replayed = waymark(["verify", save(moved), "--endpoint", server.url, "--allowed-signers", signers]);
    expect(replayed.code).toBe(1);
    expect(replayed.stderr).toContain(`signed for ${recorded.signed}, not for ${recorded.claimed}: moved from elsewhere`);
  });

  it("refuses a signed task whose files the deployment changed, or whose signed data it changed", async () => {
    const listed = structuredClone(recorded.doc);
    editTask(listed, recorded.signed, (task) => {
      task.files_changed.added = [...task.files_changed.added, "src/hidden.ts"].sort();
    });
    await resignAsDeployment(listed, devToken);
    const run = waymark(["verify", save(listed), "--endpoint", server.url, "--allowed-signers", signers]);
    expect(run.code).toBe(1);
    expect(run.stderr).toContain(`tasks[${recorded.signed}].files_changed.added: export lists 2 item(s), the device's signed data 1`);

    const data = structuredClone(recorded.doc);
    const completion = data.device_signed.find((p) => p.message.tool === "complete_task") as {
      data: { changes: { committed: unknown[] } };
    };
    completion.data.changes.committed = [];
    await resignAsDeployment(data, devToken);
    const edited = waymark(["verify", save(data), "--endpoint", server.url, "--allowed-signers", signers]);
    expect(edited.code).toBe(1);
    expect(edited.stderr).toContain("data: not what the device signed (its digest differs from message.digest)");
  });
});
