/**
 * Provenance and repository identity at the edge, through real MCP clients. Files and usage read
 * "computed and signed" only when a device the account approved signed both the task's start
 * snapshot and its completion over exactly that data and that task; whatever a client claims
 * instead (its own changes, the helper's name without a signature, a transcript source, a forged,
 * replayed, unknown or revoked device's signature) reads "claimed by the client", in the tool
 * result and in the recorded task; where no hook observed the work, the agent's edits read "not
 * observed". Resume-by-name never merges work from different repositories, nor a
 * fingerprint-less client's work with a repository's.
 */
import { describe, expect, it } from "vitest";
import { nonceOf, testDevice } from "../support/device-keys";
import { callTool as call, connect, ok } from "../support/mcp-client";
import { approvedDevice, ORIGIN, TOKENS, workerFetch, workerTarget } from "../support/worker";

type Started = { workflow_id: string; resumed?: boolean };
type Client = Awaited<ReturnType<typeof connect>>;
const BLOB = "a".repeat(40);
const HEAD = "c".repeat(40);
const repository = (fingerprint: string, branch = "main") => ({
  fingerprint: fingerprint.repeat(64),
  remote: "github.com/acme/app",
  branch,
});
const snapshot = () => ({ type: "git", head: HEAD, branch: "main", dirty: [], repository: repository("1") });

async function workflow(client: Client, name: string): Promise<string> {
  return (await ok<Started>(client, "start_workflow", { name, force_new: true })).workflow_id;
}

async function task(client: Client, name: string, start: Record<string, unknown> = snapshot()) {
  const workflow_id = await workflow(client, name);
  return ok<{ task_id: string }>(client, "start_task", { workflow_id, name: "T", goal: "g", snapshot: start });
}

const gitChanges = (extra: Record<string, unknown> = {}) => ({
  type: "git",
  start_head: HEAD,
  head: HEAD,
  committed: [],
  dirty: [
    { path: "src/agent.ts", head: null, worktree: { mode: "100644", blob: BLOB } },
    { path: "dist/bundle.js", head: null, worktree: { mode: "100644", blob: BLOB } },
  ],
  ...extra,
});
const TRANSCRIPT = { input_tokens: 5, source: "transcript", price_table_date: "2026-11-23" };

/** A task started with a snapshot `device` signed, as its helper does; returns its id and the start's nonce. */
async function signedTask(client: Client, device: Awaited<ReturnType<typeof testDevice>>) {
  const workflow_id = await workflow(client, "Signed");
  const start = await device.signSnapshot(snapshot(), workflow_id);
  const { task_id } = await ok<{ task_id: string }>(client, "start_task", { workflow_id, name: "T", goal: "g", snapshot: start });
  return { task_id, startNonce: nonceOf(start) };
}

async function complete(client: Client, task_id: string, changes: unknown, metrics: unknown = TRANSCRIPT) {
  const done = await call(client, "complete_task", { task_id, status: "success", outcome: { summary: "s" }, changes, metrics });
  expect(done.isError, done.text).toBe(false);
  const { task: view } = await ok<{ task: Record<string, unknown> }>(client, "get_workflow", { task_id });
  return { done, view, files: view.files_changed as Record<string, unknown>, metrics: view.metrics as Record<string, unknown> };
}

describe("a direct client's provenance is its claim", () => {
  it.each([
    ["changes a client sent itself", gitChanges(), "files: claimed by the client (not signed by a device)"],
    [
      "the helper's name, forged",
      gitChanges({ source: { kind: "helper", version: "0.1.0" } }),
      "files: claimed by the client (it says waymark-helper 0.1.0 computed them; not signed by a device)",
    ],
  ])("%s", async (_label, changes, line) => {
    const client = await connect(workerTarget());
    const { task_id } = await task(client, "Claims");
    const { done, view, files, metrics } = await complete(client, task_id, changes);
    expect(files.source).toMatchObject({ kind: "claimed", reason: "not signed by a device" });
    expect(done.text).toContain(line);
    expect(done.text).not.toContain("computed and signed");
    // A transcript source the client claims is its claim too.
    expect(metrics).toMatchObject({ input_tokens: 5, source: "agent" });
    expect(metrics.price_table_date).toBeUndefined();
    expect(done.structured.metrics).toMatchObject({ source: "agent" });
    expect(done.text).toContain("usage: claimed by the client");
    // The agent's edits it claims are labelled as its claim (here: none sent).
    expect(done.text).toContain("agent edits: not observed");
    expect(view.repository).toEqual({
      ...repository("1"),
      start_commit: HEAD,
      end_commit: HEAD,
      dirty_at_start: 0,
      dirty_paths_at_start: [],
    });
  });

  it("a client that sent no changes: files not observed, nothing said about edits", async () => {
    const client = await connect(workerTarget());
    const { task_id } = await task(client, "Nothing sent");
    const { done, files } = await complete(client, task_id, undefined, undefined);
    expect(files.source).toEqual({ kind: "not_observed", reason: "no file changes were sent" });
    expect(done.text).toContain("files: not observed (no file changes were sent)");
    expect(done.text).not.toContain("agent edits");
  });
});

describe("device signatures", () => {
  it("an approved device that signed both ends: computed and signed, with its name, in the result and the record", async () => {
    const client = await connect(workerTarget());
    const { device, fingerprint } = await approvedDevice("build box");
    const { task_id, startNonce } = await signedTask(client, device);
    const changes = await device.signChanges(gitChanges({ agent_edits: { paths: ["src/agent.ts"] } }), TRANSCRIPT, task_id, startNonce);
    const { done, files, metrics } = await complete(client, task_id, changes);
    const named = { name: "build box", fingerprint };
    expect(files.source).toEqual({ kind: "signed", version: "0.1.0", device: named });
    expect(files.not_by_agent_tools).toEqual(["dist/bundle.js"]);
    expect(metrics).toMatchObject({ source: "transcript", price_table_date: "2026-11-23", device: named });
    const shown = `device “build box” (${fingerprint.slice(0, 19)}…)`;
    expect(done.text).toContain(`files: computed and signed by waymark-helper 0.1.0 on ${shown}`);
    expect(done.text).toContain(`agent edits: computed and signed (the agent's hooks, on ${shown}): 1 file edited`);
    expect(done.text).toContain(`usage: computed and signed (summed from the agent's transcript by waymark-helper on ${shown}`);
    // The record keeps no signature: only the verdict.
    expect(JSON.stringify(files)).not.toContain(device.key);
  });

  it("a device name is text wherever it is shown: escaped on the page and in the Markdown export", async () => {
    const client = await connect(workerTarget());
    const name = "<img src=x onerror=alert(1)> *box* [x](https://evil.example)";
    const { device } = await approvedDevice(name);
    const started = await ok<{ workflow_id: string; share_url: string }>(client, "start_workflow", { name: "Named", force_new: true });
    const start = await device.signSnapshot(snapshot(), started.workflow_id);
    const { task_id } = await ok<{ task_id: string }>(client, "start_task", {
      workflow_id: started.workflow_id,
      name: "T",
      goal: "g",
      snapshot: start,
    });
    await complete(client, task_id, await device.signChanges(gitChanges(), TRANSCRIPT, task_id, nonceOf(start)));
    const page = await (await workerFetch(started.share_url)).text();
    expect(page).toContain("computed and signed");
    expect(page).not.toContain("<img src=x");
    expect(page).toContain("&lt;img src=x onerror=alert(1)&gt;");
    const markdown = await (await workerFetch(`${started.share_url}/export.md`)).text();
    expect(markdown).toContain("Files: computed and signed by waymark-helper 0.1.0 on device");
    expect(markdown).not.toContain("<img src=x");
    expect(markdown).not.toContain("[x](https://evil.example)");
  });

  it("hooks that observed nothing: the agent's edits are not observed, never 'not by agent tools'", async () => {
    const client = await connect(workerTarget());
    const { device } = await approvedDevice("codex box");
    const { task_id, startNonce } = await signedTask(client, device);
    const { done, files } = await complete(client, task_id, await device.signChanges(gitChanges(), TRANSCRIPT, task_id, startNonce));
    expect(files.source).toMatchObject({ kind: "signed" });
    expect(files.not_by_agent_tools).toBeUndefined();
    expect(done.text).toContain("agent edits: not observed (no hook of the agent recorded this task's work");
    expect(done.text).not.toContain("not touched by them");
  });

  it.each<[string, (setup: { client: Client }) => Promise<{ task_id: string; changes: unknown; reason: RegExp }>]>([
    [
      "a forged signature (random bytes under an approved key)",
      async ({ client }) => {
        const { device } = await approvedDevice("laptop");
        const { task_id, startNonce } = await signedTask(client, device);
        const changes = await device.signChanges(gitChanges(), TRANSCRIPT, task_id, startNonce);
        const signed = changes as unknown as { source: { device: { signature: string } } };
        signed.source.device.signature = "A".repeat(86);
        return { task_id, changes, reason: /does not verify/ };
      },
    ],
    [
      "a genuine signature replayed onto another task",
      async ({ client }) => {
        const { device } = await approvedDevice("laptop");
        const first = await signedTask(client, device);
        const genuine = await device.signChanges(gitChanges(), TRANSCRIPT, first.task_id, first.startNonce);
        const other = await signedTask(client, device);
        return { task_id: other.task_id, changes: genuine, reason: /does not verify/ };
      },
    ],
    [
      "genuine data with a file added after signing",
      async ({ client }) => {
        const { device } = await approvedDevice("laptop");
        const { task_id, startNonce } = await signedTask(client, device);
        const changes = await device.signChanges(gitChanges(), TRANSCRIPT, task_id, startNonce);
        (changes.dirty as unknown[]).push({ path: "backdoor.ts", head: null, worktree: { mode: "100644", blob: BLOB } });
        return { task_id, changes, reason: /does not verify/ };
      },
    ],
    [
      "a device the account never approved",
      async ({ client }) => {
        const stranger = await testDevice();
        const { task_id, startNonce } = await signedTask(client, stranger);
        return { task_id, changes: await stranger.signChanges(gitChanges(), TRANSCRIPT, task_id, startNonce), reason: /has not approved/ };
      },
    ],
    [
      "a revoked device",
      async ({ client }) => {
        const { device, id } = await approvedDevice("stolen laptop");
        const { task_id, startNonce } = await signedTask(client, device);
        const revoked = await workerFetch(`${ORIGIN}/api/devices/${id}`, {
          method: "DELETE",
          headers: { Authorization: `Bearer ${TOKENS.acme}` },
        });
        expect(revoked.status).toBe(200);
        return { task_id, changes: await device.signChanges(gitChanges(), TRANSCRIPT, task_id, startNonce), reason: /revoked/ };
      },
    ],
  ])("%s: claimed by the client, with the reason", async (_label, attempt) => {
    const client = await connect(workerTarget());
    const { task_id, changes, reason } = await attempt({ client });
    const { done, files, metrics } = await complete(client, task_id, changes);
    expect(files.source).toMatchObject({ kind: "claimed", version: "0.1.0", reason: expect.stringMatching(reason) });
    expect(metrics).toMatchObject({ source: "agent" });
    expect(metrics.device).toBeUndefined();
    expect(done.text).toMatch(/files: claimed by the client \(it says waymark-helper 0\.1\.0 computed them; /);
    expect(done.text).toContain("usage: claimed by the client");
    expect(done.text).not.toContain("computed and signed");
  });

  it("another account's device counts for nothing here", async () => {
    const { device } = await approvedDevice("acme laptop");
    const globex = await connect(workerTarget(TOKENS.globex));
    const { task_id, startNonce } = await signedTask(globex, device);
    const { files } = await complete(globex, task_id, await device.signChanges(gitChanges(), TRANSCRIPT, task_id, startNonce));
    expect(files.source).toMatchObject({ kind: "claimed", reason: expect.stringMatching(/has not approved/) });
  });

  it("a start the device did not sign: the files are a claim, the usage the device signed is not", async () => {
    const client = await connect(workerTarget());
    const { device, fingerprint } = await approvedDevice("laptop");
    const { task_id } = await task(client, "Unsigned start");
    const { files, metrics } = await complete(client, task_id, await device.signChanges(gitChanges(), TRANSCRIPT, task_id));
    expect(files.source).toEqual({ kind: "claimed", version: "0.1.0", reason: "its start snapshot was not signed by the same device" });
    expect(metrics).toMatchObject({ source: "transcript", device: { name: "laptop", fingerprint } });
  });

  it("a retry signed afresh is the same request: the first result, no conflict", async () => {
    const client = await connect(workerTarget());
    const { device } = await approvedDevice("laptop");
    const { task_id, startNonce } = await signedTask(client, device);
    const args = { task_id, status: "success", outcome: { summary: "s" }, metrics: TRANSCRIPT, idempotency_key: "retry-1" };
    const first = await call(client, "complete_task", {
      ...args,
      changes: await device.signChanges(gitChanges(), TRANSCRIPT, task_id, startNonce),
    });
    const again = await call(client, "complete_task", {
      ...args,
      changes: await device.signChanges(gitChanges(), TRANSCRIPT, task_id, startNonce),
    });
    expect(first.isError, first.text).toBe(false);
    expect(again.isError, again.text).toBe(false);
    expect(again.structured).toEqual(first.structured);
  });

  it("refuses a malformed signature by field and rule", async () => {
    const client = await connect(workerTarget());
    const { task_id } = await task(client, "Malformed");
    const changes = gitChanges({
      source: { kind: "helper", version: "0.1.0", device: { key: "short", signed_at: 1, nonce: "n", signature: "s" } },
    });
    const result = await call(client, "complete_task", { task_id, status: "success", outcome: { summary: "s" }, changes });
    expect(result.isError).toBe(true);
    expect(result.text).toContain("changes.source.device.key: must be a 32-byte Ed25519 public key");
  });
});

describe("resume by name within one repository", () => {
  it("resumes only an open workflow of the same repository; fingerprint-less clients never join a repository's workflow", async () => {
    const client = await connect(workerTarget());
    const name = "Shared name";
    const a = await ok<Started>(client, "start_workflow", { name, repository: repository("a") });
    const b = await ok<Started>(client, "start_workflow", { name, repository: repository("b") });
    expect(b.workflow_id).not.toBe(a.workflow_id);
    expect(b.resumed).toBeUndefined();
    const aAgain = await ok<Started>(client, "start_workflow", { name, repository: repository("a", "feature") });
    expect(aAgain).toMatchObject({ workflow_id: a.workflow_id, resumed: true });
    const direct = await ok<Started>(client, "start_workflow", { name });
    expect([a.workflow_id, b.workflow_id]).not.toContain(direct.workflow_id);
    expect(direct.resumed).toBeUndefined();
    const directAgain = await ok<Started>(client, "start_workflow", { name });
    expect(directAgain).toMatchObject({ workflow_id: direct.workflow_id, resumed: true });
    const { workflow } = await ok<{ workflow: { repository: unknown } }>(client, "get_workflow", { workflow_id: a.workflow_id });
    expect(workflow.repository).toEqual(repository("a"));
  });

  it("refuses a malformed fingerprint by field and rule", async () => {
    const client = await connect(workerTarget());
    const result = await call(client, "start_workflow", {
      name: "Bad fingerprint",
      repository: { fingerprint: "xyz", remote: null, branch: null },
    });
    expect(result.isError).toBe(true);
    expect(result.text).toContain("repository.fingerprint");
  });

  it("does not advertise the helper-only input in tools/list", async () => {
    const client = await connect(workerTarget());
    const { tools } = await client.listTools();
    const start = tools.find((t) => t.name === "start_workflow");
    expect(Object.keys(start?.inputSchema.properties ?? {})).not.toContain("repository");
  });
});

describe("what makes a record checkable from the repository", () => {
  it("complete_task names the chain after its write (a retry the same), and the record names the paths dirty at the start", async () => {
    const client = await connect(workerTarget());
    const dirty = [
      { path: "notes.txt", head: { mode: "100644", blob: BLOB }, worktree: { mode: "100644", blob: "b".repeat(40) } },
      { path: "a/new.txt", head: null, worktree: { mode: "100644", blob: BLOB } },
    ];
    const { task_id } = await task(client, "Checkpoint", { ...snapshot(), dirty });
    const args = { task_id, status: "success", outcome: { summary: "s" }, changes: gitChanges(), idempotency_key: "checkpoint-1" };
    const done = await call(client, "complete_task", args);
    expect(done.isError, done.text).toBe(false);
    const checkpoint = done.structured.checkpoint as Record<string, unknown>;
    const { task: view } = await ok<{ task: Record<string, unknown> }>(client, "get_workflow", { task_id });
    expect(checkpoint).toMatchObject({ task_name: "T", completed_at: view.completed_at, origin: ORIGIN });
    // The chain after the completion: the JSON export's event of that number ends on that head.
    const workflowId = checkpoint.workflow_id as string;
    const exported = await workerFetch(`${ORIGIN}/api/workflows/${workflowId}/export.json`, {
      headers: { Authorization: `Bearer ${TOKENS.acme}` },
    });
    const events = ((await exported.json()) as { events: { seq: number; hash: string; type: string }[] }).events;
    const atCompletion = events[(checkpoint.events as number) - 1];
    expect(atCompletion).toMatchObject({ seq: checkpoint.events, hash: checkpoint.head, type: "task.completed" });
    expect(events.length).toBe(checkpoint.events);
    // A retry is answered with the first result: the same checkpoint.
    const again = await call(client, "complete_task", args);
    expect(again.structured.checkpoint).toEqual(checkpoint);
    expect((view.repository as Record<string, unknown>).dirty_paths_at_start).toEqual(["a/new.txt", "notes.txt"]);
  });

  it("names no dirty paths when the start snapshot had more than the record keeps", async () => {
    const client = await connect(workerTarget());
    const dirty = Array.from({ length: 1001 }, (_, i) => ({ path: `f/${i}.txt`, head: null, worktree: { mode: "100644", blob: BLOB } }));
    const { task_id } = await task(client, "Many dirty", { ...snapshot(), dirty });
    const { view } = await complete(client, task_id, gitChanges());
    expect(view.repository).toMatchObject({ dirty_at_start: 1001 });
    expect(view.repository).not.toHaveProperty("dirty_paths_at_start");
  });
});
