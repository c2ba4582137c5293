/**
 * The device evidence in the JSON export, checked by @waymark/protocol/verify as `waymark verify`
 * checks it: a task whose start and completion an approved device signed (through a real MCP
 * client, usage from a transcript and commands its hooks observed) exports both payloads; with
 * the device in the allowed signers its files, usage, commands, durability observations and
 * repository are checked and pass. Then the deployment lies, signing each lie with its own key:
 * usage figures, an observed command, an observation of an earlier task's lines or a commit made up; a payload dropped; a device the repository does not trust. Each is named.
 */
import { env } from "cloudflare:test";
import { allowedSignerLine, parseAllowedSigners } from "@waymark/protocol/allowed-signers";
import { memberDigest } from "@waymark/protocol/statement";
import { checkExport, type ExportCheck } from "@waymark/protocol/verify";
import { describe, expect, it } from "vitest";
import { publishedKeys, signStatement } from "../../src/signing";
import { nonceOf } from "../support/device-keys";
import { type ForgedExport, rechain } from "../support/export-forgery";
import { callTool, connect, ok } from "../support/mcp-client";
import { approvedDevice, ORIGIN, TOKENS, workerFetch, workerTarget } from "../support/worker";

const HEAD = "c".repeat(40);
const END = "d".repeat(40);
const BLOB = "a".repeat(40);
const REPOSITORY = { fingerprint: "1".repeat(64), remote: "github.com/acme/app", branch: "main" };
const METRICS = {
  input_tokens: 1200,
  output_tokens: 300,
  model: "claude-x",
  cost_usd: 0.0123,
  source: "transcript",
  price_table_date: "2026-11-23",
};
const at = Date.now();
const COMMANDS = {
  runs: [
    { command: "npm test", at: at - 2000, exit_code: 0, duration_ms: 900, kinds: ["test"] },
    { command: "npx tsc --noEmit", at: at - 5000, exit_code: 1, duration_ms: 400, kinds: ["typecheck"] },
  ],
  last_edit_at: at - 8000,
};
/** What the helper found of an earlier task's lines (docs/insights.md): signed with the changes. */
const DURABILITY = [{ task_id: "tk_aaaaaaaaaaaaaaaaaaaa_aaaaaaaa", commit: HEAD, at: at - 1000, recorded: 12, present: 9 }];

type Doc = ForgedExport & {
  tasks: ({ id: string } & Record<string, unknown>)[];
  device_signed: { task_id: string; message: { tool: string }; fingerprint: string }[];
};

/** A task an approved device signed at both ends, with usage and observed commands; its export. */
async function signedExport(): Promise<{ doc: Doc; taskId: string; signers: ReturnType<typeof parseAllowedSigners>; key: string }> {
  const { device } = await approvedDevice("build box");
  const client = await connect(workerTarget());
  const { workflow_id } = await ok<{ workflow_id: string }>(client, "start_workflow", { name: "Evidence", force_new: true });
  const start = await device.signSnapshot({ type: "git", head: HEAD, branch: "main", dirty: [], repository: REPOSITORY }, workflow_id);
  const { task_id } = await ok<{ task_id: string }>(client, "start_task", { workflow_id, name: "T", goal: "g", snapshot: start });
  const changes = await device.signChanges(
    {
      type: "git",
      start_head: HEAD,
      head: END,
      committed: [{ path: "src/a.ts", before: null, after: { mode: "100644", blob: BLOB } }],
      dirty: [],
      commands: COMMANDS,
      durability: DURABILITY,
      review: {
        lines: [{ path: "src/a.ts", added: 3, removed: 0 }],
        commits: [{ sha: END.slice(0, 12), subject: "Add a" }],
        branch: "main",
      },
    },
    METRICS,
    task_id,
    nonceOf(start),
  );
  const done = await callTool(client, "complete_task", {
    task_id,
    status: "success",
    outcome: { summary: "s" },
    changes,
    metrics: METRICS,
  });
  expect(done.isError, done.text).toBe(false);
  const response = await workerFetch(`${ORIGIN}/api/workflows/${workflow_id}/export.json`, {
    headers: { Authorization: `Bearer ${TOKENS.acme}` },
  });
  expect(response.status).toBe(200);
  const doc = (await response.json()) as Doc;
  return { doc, taskId: task_id, signers: parseAllowedSigners(allowedSignerLine("build box", device.key)), key: device.key };
}

async function check(doc: Doc, signers: ReturnType<typeof parseAllowedSigners> | null): Promise<ExportCheck> {
  return (await checkExport(doc, { keys: await publishedKeys(env as Env), signers })) as ExportCheck;
}

/** The deployment lies: `edit` applied to the completed task in the record and in its events, the chain and the statement redone with its key. */
async function lie(doc: Doc, taskId: string, edit: (task: Record<string, unknown>) => void): Promise<Doc> {
  const forged = structuredClone(doc);
  edit(forged.tasks.find((task) => task.id === taskId) as Record<string, unknown>);
  for (const event of forged.events) if (event.task_id === taskId && event.type !== "task.started") edit(event.data);
  rechain(forged);
  return resigned(forged);
}

async function resigned(doc: Doc): Promise<Doc> {
  const { statement, ...members } = doc;
  const content = Object.fromEntries(Object.entries(members).map(([name, value]) => [name, memberDigest(value)]));
  doc.statement = await signStatement(env as Env, { ...statement.payload, head: doc.events.at(-1)?.hash ?? "", content });
  return doc;
}

describe("the device evidence an export carries", () => {
  it("checks a signed task's files, usage, commands and repository against the device's own payloads", async () => {
    const { doc, taskId, signers, key } = await signedExport();
    expect(doc.device_signed.map((p) => [p.task_id, p.message.tool])).toEqual([
      [taskId, "start_task"],
      [taskId, "complete_task"],
    ]);
    const passed = await check(doc, signers);
    expect(passed.problems).toEqual([]);
    expect(passed.provenance.status).toBe("checked");
    expect(Object.keys(passed.provenance.files)[0]).toMatch(
      /^computed and signed on device “build box” \(SHA256:.*\): checked, allowed signer build-box$/,
    );
    expect(Object.keys(passed.provenance.usage)[0]).toMatch(/: checked, allowed signer build-box$/);

    const unchecked = await check(doc, null);
    expect(unchecked.provenance.status).toBe("not_checked");
    expect(Object.keys(unchecked.provenance.usage)[0]).toMatch(/per the server: NOT CHECKED$/);

    const stranger = await check(doc, parseAllowedSigners(allowedSignerLine("someone", "Q".repeat(43))));
    expect(stranger.problems).toContain(`device_signed[0]: device key ${doc.device_signed[0]?.fingerprint} is not in the allowed signers`);
    expect(key).not.toBe("Q".repeat(43));
  });

  it("leaves out, as the edge does, a file credited to a concurrent task that completed first with the same change", async () => {
    const { device } = await approvedDevice("pair box");
    const client = await connect(workerTarget());
    const { workflow_id } = await ok<{ workflow_id: string }>(client, "start_workflow", { name: "Concurrent", force_new: true });
    const snapshot = { type: "checksum", files: 0, digest: "x" };
    const start = async (name: string) => {
      const signed = await device.signSnapshot(snapshot, workflow_id);
      const { task_id } = await ok<{ task_id: string }>(client, "start_task", { workflow_id, name, goal: "g", snapshot: signed });
      return { task_id, nonce: nonceOf(signed) };
    };
    const [first, second] = [await start("First"), await start("Second")];
    const shared = { path: "src/shared.ts", before: null, after: { mode: "100644", blob: BLOB } };
    const own = { path: "src/own.ts", before: null, after: { mode: "100644", blob: "b".repeat(40) } };
    for (const [task, transitions] of [
      [first, [shared]],
      [second, [shared, own]],
    ] as const) {
      const changes = await device.signChanges({ type: "checksum", transitions }, null, task.task_id, task.nonce);
      const done = await callTool(client, "complete_task", {
        task_id: task.task_id,
        status: "success",
        outcome: { summary: "s" },
        changes,
      });
      expect(done.isError, done.text).toBe(false);
    }
    const response = await workerFetch(`${ORIGIN}/api/workflows/${workflow_id}/export.json`, {
      headers: { Authorization: `Bearer ${TOKENS.acme}` },
    });
    const doc = (await response.json()) as Doc;
    const later = doc.tasks.find((task) => task.id === second.task_id) as unknown as { files_changed: { added: string[] } };
    expect(later.files_changed.added).toEqual(["src/own.ts"]);
    const checked = await check(doc, parseAllowedSigners(allowedSignerLine("pair box", device.key)));
    expect(checked.problems).toEqual([]);
    expect(checked.provenance.files).toEqual({ [Object.keys(checked.provenance.files)[0] ?? ""]: 2 });
    expect(Object.keys(checked.provenance.files)[0]).toMatch(/: checked, allowed signer pair-box$/);
  });

  it("names each lie the deployment signs about a signed task", async () => {
    const { doc, taskId, signers } = await signedExport();
    const path = `tasks[${taskId}]`;
    const cases: [(task: Record<string, unknown>) => void, string][] = [
      [
        (task) => {
          (task.metrics as Record<string, unknown>).input_tokens = 12;
        },
        `${path}.metrics.input_tokens: export says 12, the device signed 1200`,
      ],
      [
        (task) => {
          // Oldest first: the failed typecheck, made to pass.
          const runs = (task.commands as { runs: { exit_code: number }[] }).runs;
          if (runs[0]) runs[0].exit_code = 0;
        },
        `${path}.commands.runs[0].exit_code: export says 0, the device signed 1`,
      ],
      [
        (task) => {
          // Fewer of an earlier task's lines gone than the device found.
          const seen = (task.durability as { present: number }[])[0];
          if (seen) seen.present = 12;
        },
        `${path}.durability[0].present: export says 12, the device signed 9`,
      ],
      [
        (task) => {
          (task.files_changed as { commits: unknown[] }).commits = [];
        },
        `${path}.files_changed.commits: export lists 0 item(s), the device's signed data 1 (first difference at [0]: export says nothing, the device signed {"sha":"${END.slice(0, 12)}","subject":"Add a"})`,
      ],
      [
        (task) => {
          (task.repository as Record<string, unknown>).end_commit = "e".repeat(40);
        },
        `${path}.repository.end_commit: export says "${"e".repeat(40)}", the device signed "${END}"`,
      ],
    ];
    for (const [edit, problem] of cases) {
      const forged = await lie(doc, taskId, edit);
      const found = await check(forged, signers);
      expect(found.signature.status).toBe("ok");
      expect(found.problems, JSON.stringify(found.problems)).toContain(problem);
    }

    const dropped = structuredClone(doc);
    dropped.device_signed = dropped.device_signed.filter((p) => p.message.tool !== "complete_task");
    const missing = await check(await resigned(dropped), signers);
    expect(missing.problems).toContain(
      `${path}.metrics: labelled computed and signed, but the export carries no signed completion for the task (device_signed)`,
    );
  });
});
