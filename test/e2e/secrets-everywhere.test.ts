import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { cleanupTempDirs, Repo, tempDir } from "../../client-helper/test/fixtures";
import { BIN, ensureBuilt, SYSTEM_NODE } from "../../client-helper/test/support";
import { connectThroughHelper } from "../support/agents";
import type { DevServer } from "../support/dev-server";
import { getFrom } from "../support/loopback-get";
import { connect, ok } from "../support/mcp-client";
import { newReaderAddress } from "../support/reader-proxy";
import { sharedDevServer } from "../support/shared-server";

/**
 * No secret reaches a record, wherever it is sent, replayed against `wrangler dev`:
 *   - a direct MCP client (no helper) puts a GitHub token and an AWS key id in every string and key
 *     it can: command lines, warnings, commit subjects, branch names, a changed path, a metadata key;
 *   - the real helper, whose device the owner approved, records a task on a branch named after an
 *     AWS key id, with a commit whose subject holds a GitHub token and a file named after the key:
 *     what it computed is redacted before it is signed, so it still reads "computed and signed".
 * Neither secret appears in the JSON, Markdown or Agent Trace exports, nor on the shared page.
 * And only secrets go: code that names where a secret lives (`apiKey: process.env.OPENAI_API_KEY`),
 * sent by a direct client in every field it can, reaches the exports as written.
 */
// Secrets are assembled at run time so that no scanner mistakes this file for a leak.
const GITHUB_TOKEN = ["ghp_", "Vq7Ls2Kd9Wm4Xn8Bc1Zr", "6Tf3Hy5Jp0Ge7Ua2"].join("");
const AWS_KEY_ID = ["AKIA", "QW3RTY7UIOP", "ASDFG"].join("");
const HEX40 = "0123456789abcdef0123456789abcdef01234567";
const HEX64 = `${HEX40}0123456789abcdef01234567`;

let server: DevServer;

beforeAll(() => {
  server = sharedDevServer();
});
afterAll(() => cleanupTempDirs());

/** Everything a reader can get of a workflow: the owner's JSON and Markdown exports, the shared page and its Agent Trace export. */
async function everything(workflowId: string, shareUrl: string): Promise<Record<string, string>> {
  const api = async (path: string) => {
    const response = await fetch(`${server.url}${path}`, { headers: { Authorization: `Bearer ${server.token}` } });
    expect(response.status, path).toBe(200);
    return response.text();
  };
  const shared = async (path: string) => {
    const got = await getFrom(`${shareUrl}${path}`, newReaderAddress());
    expect(got.status, path).toBe(200);
    return got.body;
  };
  return {
    "export.json": await api(`/api/workflows/${workflowId}/export.json`),
    "export.md": await api(`/api/workflows/${workflowId}/export.md`),
    "shared page": await shared(""),
    "export.agent-trace.json": await shared("/export.agent-trace.json"),
  };
}

function expectNoSecret(texts: Record<string, string>): void {
  for (const [where, text] of Object.entries(texts)) {
    expect(text, where).not.toContain(GITHUB_TOKEN);
    expect(text, where).not.toContain(AWS_KEY_ID);
    // Neither in part: the token's random body is gone too.
    expect(text, where).not.toContain(GITHUB_TOKEN.slice(4, 20));
  }
}

describe("secrets never reach a record", () => {
  it("a direct client's secrets in command lines, warnings, commit subjects, branch names, a path and a metadata key are redacted at the edge", async () => {
    const client = await connect(server, { name: "direct client" });
    const started = await ok<{ workflow_id: string; share_url: string }>(client, "start_workflow", {
      name: "Deploy keys",
      repository: { fingerprint: HEX64, remote: "github.com/acme/app", branch: `feat/${GITHUB_TOKEN}` },
    });
    const { workflow_id } = started;
    const task = await ok<{ task_id: string }>(client, "start_task", {
      workflow_id,
      name: "Rotate",
      goal: "Rotate the deploy keys",
      snapshot: { type: "git", head: HEX40, branch: `release/${AWS_KEY_ID}`, dirty: [], warnings: [`git: could not read ${GITHUB_TOKEN}`] },
    });
    await ok(client, "log_milestone", {
      task_id: task.task_id,
      message: "Keys listed",
      metadata: { [`key ${AWS_KEY_ID}`]: "old", nested: { [GITHUB_TOKEN]: true } },
    });
    const done = await ok<{ files_changed: Record<string, unknown> }>(client, "complete_task", {
      task_id: task.task_id,
      status: "success",
      outcome: { summary: "Rotated" },
      changes: {
        type: "git",
        start_head: HEX40,
        head: HEX40.replace("0", "1"),
        committed: [{ path: `keys/${AWS_KEY_ID}.pub`, before: null, after: { mode: "100644", blob: HEX40 } }],
        dirty: [],
        warnings: [`hook: ${AWS_KEY_ID} seen in the environment`],
        commands: {
          runs: [
            {
              command: `curl -H "Authorization: token ${GITHUB_TOKEN}" https://api.github.com/user`,
              at: Date.now(),
              exit_code: 0,
              duration_ms: 120,
              kinds: [],
            },
          ],
          last_edit_at: null,
        },
        review: {
          lines: [],
          commits: [{ sha: "abcdef1", subject: `ci: use ${GITHUB_TOKEN} for ${AWS_KEY_ID}` }],
          branch: `feat/${AWS_KEY_ID}`,
        },
      },
    });
    expect(done.files_changed.added).toEqual(["keys/[redacted: AWS access key id].pub"]);
    const texts = await everything(workflow_id, started.share_url);
    expectNoSecret(texts);
    // What was there is still said, by kind.
    expect(texts["export.json"]).toContain("[redacted: GitHub token]");
    expect(texts["export.json"]).toContain("[redacted: AWS access key id]");
    await client.close();
  }, 120_000);

  it("the real helper redacts its own branch name, commit subjects and paths before it signs: still computed and signed, no secret recorded", async () => {
    ensureBuilt();
    const home = tempDir("waymark-home-");
    const env = { HOME: home, XDG_CONFIG_HOME: join(home, ".config") };
    const device = spawnSync(SYSTEM_NODE, [BIN, "device"], { encoding: "utf8", env: { ...process.env, ...env } });
    const publicKey = /^Public key: +(\S+)$/m.exec(device.stdout)?.[1];
    const approved = await fetch(`${server.url}/api/devices`, {
      method: "POST",
      headers: { Authorization: `Bearer ${server.token}`, "Content-Type": "application/json" },
      body: JSON.stringify({ name: "laptop", key: publicKey }),
    });
    expect(approved.status, await approved.clone().text()).toBe(201);

    const repo = Repo.init().write("README.md", "# app\n").commitAll("initial");
    repo.git("checkout", "-q", "-b", `feat/${AWS_KEY_ID}`);
    const agent = await connectThroughHelper(server, repo.dir, { cacheHome: tempDir("waymark-cache-"), env });
    const started = await ok<{ workflow_id: string; share_url: string }>(agent, "start_workflow", { name: "Helper keys" });
    const task = await ok<{ task_id: string }>(agent, "start_task", { workflow_id: started.workflow_id, name: "Keys", goal: "Add a key" });
    repo.write(`keys/${AWS_KEY_ID}.pub`, "ssh-ed25519 AAAA test\n").commitAll(`chore: deploy with ${GITHUB_TOKEN}`);
    const done = await ok<{ files_changed: { added: string[]; source: { kind: string }; branch: string; commits: { subject: string }[] } }>(
      agent,
      "complete_task",
      { task_id: task.task_id, status: "success", outcome: { summary: "Key added" } },
    );
    expect(done.files_changed.added).toEqual(["keys/[redacted: AWS access key id].pub"]);
    expect(done.files_changed.branch).toBe("feat/[redacted: AWS access key id]");
    expect(done.files_changed.commits.map((c) => c.subject)).toEqual(["chore: deploy with [redacted: GitHub token]"]);
    // Redacted before it was signed: the edge's own redaction changed nothing, and the signature verifies.
    expect(done.files_changed.source.kind).toBe("signed");
    expectNoSecret(await everything(started.workflow_id, started.share_url));
    await agent.close();
  }, 120_000);

  it("code and prose that name where a secret lives are stored as written, wherever a client sends them", async () => {
    /** `${NAME}` as shells write it (not a template of this file). */
    const env = (name: string) => ["$", `{${name}}`].join("");
    const references = [
      "apiKey: process.env.OPENAI_API_KEY",
      `export DATABASE_URL="postgres://app:${env("DB_PASSWORD")}@db/app"`,
      "const password = await keyring.getPassword(service)",
      'secret = os.environ["SERVICE_SECRET"]',
      "api_key = settings.STRIPE_API_KEY",
    ];
    const client = await connect(server, { name: "direct client" });
    const started = await ok<{ workflow_id: string; share_url: string }>(client, "start_workflow", {
      name: "Configuration",
      repository: { fingerprint: HEX64, remote: "github.com/acme/app", branch: "main" },
    });
    const task = await ok<{ task_id: string }>(client, "start_task", {
      workflow_id: started.workflow_id,
      name: "Read keys from the environment",
      goal: references[0],
      snapshot: { type: "git", head: HEX40, branch: "main", dirty: [], warnings: [references[3]] },
    });
    await ok(client, "log_milestone", {
      task_id: task.task_id,
      message: references[1],
      metadata: { [references[2] as string]: references[3] },
    });
    await ok(client, "log_decision", {
      task_id: task.task_id,
      category: "other",
      question: "Where does the key come from?",
      options_considered: references,
      chosen: references[0],
      reasoning: references.join("\n"),
    });
    const done = await ok<Record<string, unknown>>(client, "complete_task", {
      task_id: task.task_id,
      status: "success",
      outcome: { summary: references[4] },
      changes: {
        type: "git",
        start_head: HEX40,
        head: HEX40.replace("0", "1"),
        committed: [],
        dirty: [],
        warnings: [references[4]],
        commands: { runs: [{ command: references[1], at: Date.now(), exit_code: 0, duration_ms: 5, kinds: [] }], last_edit_at: null },
        review: { lines: [], commits: [{ sha: "abcdef1", subject: references[0] }], branch: "main" },
      },
    });
    expect(JSON.stringify(done)).not.toContain("[redacted");
    const texts = await everything(started.workflow_id, started.share_url);
    for (const [where, text] of Object.entries(texts)) expect(text, where).not.toContain("[redacted");
    // Every sample is in the JSON export, as written, in each place it was sent.
    const strings: string[] = [];
    const collect = (value: unknown): void => {
      if (typeof value === "string") strings.push(value);
      else if (Array.isArray(value)) for (const item of value) collect(item);
      else if (value !== null && typeof value === "object")
        for (const [key, item] of Object.entries(value)) {
          strings.push(key);
          collect(item);
        }
    };
    collect(JSON.parse(texts["export.json"] ?? "null"));
    for (const reference of references) expect(strings, reference).toContain(reference);
    expect(strings).toContain(references.join("\n"));
    await client.close();
  }, 120_000);
});
