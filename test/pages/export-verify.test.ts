/**
 * The JSON export against @waymark/protocol/verify where the export is hardest to follow from its
 * events: a task too large for one stored value (its events name its first files and count the
 * rest) and writes landing while the export streams (the records read after the head).
 */
import { env, runInDurableObject } from "cloudflare:test";
import { checkExport, type ExportCheck } from "@waymark/protocol/verify";
import { describe, expect, it } from "vitest";
import { newWorkflowId } from "../../src/ids";
import { LIMITS } from "../../src/limits";
import { publishedKeys } from "../../src/signing";
import { file } from "../domain/fixtures";
import { ORIGIN, signIn, workerFetch } from "../support/worker";
import { stubFor, value } from "../workflow/rpc";

const ACME = "acme";

type Doc = {
  tasks: { id: string; files_changed: { added: string[] } }[];
  events: { type: string; data: { files_changed?: { added: string[]; more?: number } | null } }[];
  chain: { events: number };
  decisions: { id: string }[];
};

async function exportOf(id: string): Promise<Doc> {
  const response = await workerFetch(`${ORIGIN}/w/${id}/export.json`, { headers: { Cookie: await signIn() } });
  expect(response.status).toBe(200);
  return (await response.json()) as Doc;
}

const check = async (doc: unknown) => (await checkExport(doc, { keys: await publishedKeys(env as Env), signers: null })) as ExportCheck;

describe("an export that follows from its events", () => {
  it("names a large task's every file; its events name the first and count the rest, which the signature alone covers", async () => {
    const id = newWorkflowId();
    const stub = stubFor(id);
    value(await stub.startWorkflow(ACME, id, { name: "Generated" }));
    const task = value(await stub.startTask(ACME, { workflow_id: id, name: "Generate", goal: "Many files" })).task_id;
    const paths = Array.from({ length: 2500 }, (_, n) => `gen/${String(n).padStart(5, "0")}-${"p".repeat(90)}.ts`);
    value(
      await stub.completeTask(ACME, {
        task_id: task,
        status: "success",
        outcome: { summary: "Generated" },
        changes: { type: "checksum", transitions: paths.map((path, n) => ({ path, before: null, after: file(`g${n}`) })) },
      }),
    );
    const doc = await exportOf(id);
    const completed = doc.events.find((event) => event.type === "task.completed")?.data.files_changed;
    const named = completed?.added.length ?? 0;
    expect(completed?.more).toBe(paths.length - named);
    expect(named * 200).toBeLessThan(2 * LIMITS.VIEW_FILE_BYTES);
    expect(doc.tasks[0]?.files_changed.added).toEqual(paths);

    const genuine = await check(doc);
    expect(genuine.problems).toEqual([]);
    expect(genuine.not_covered).toEqual([
      `tasks[${task}]: its events name ${named} of its ${paths.length} changed files and count the rest; the other ${paths.length - named} names are covered by the signature only`,
    ]);

    // A name its events do not give: only the signature catches it.
    const renamed = structuredClone(doc);
    (renamed.tasks[0] as { files_changed: { added: string[] } }).files_changed.added[paths.length - 1] = "gen/innocent.ts";
    expect((await check(renamed)).problems).toEqual(["tasks: not what the deployment signed (changed after signing)"]);
    // A name its events give, or the count: the events catch it too.
    const first = structuredClone(doc);
    (first.tasks[0] as { files_changed: { added: string[] } }).files_changed.added[0] = "gen/innocent.ts";
    expect((await check(first)).problems).toContainEqual(
      expect.stringContaining(
        `tasks[${task}].files_changed.added (of the ${named} files its events name): export lists ${named - 1} item(s), its events ${named} (first difference at [0]`,
      ),
    );
    const cut = structuredClone(doc);
    (cut.tasks[0] as { files_changed: { added: string[] } }).files_changed.added.pop();
    expect((await check(cut)).problems).toContain(
      `tasks[${task}].files_changed: export lists ${paths.length - 1} changed file(s), its events name ${named} and count ${paths.length - named} more`,
    );
  });

  it("holds when writes land while it streams: records in a state between the head read and the last event", async () => {
    const id = newWorkflowId();
    const stub = stubFor(id);
    value(await stub.startWorkflow(ACME, id, { name: "Busy" }));
    const first = value(await stub.startTask(ACME, { workflow_id: id, name: "First", goal: "g" })).task_id;
    const second = value(await stub.startTask(ACME, { workflow_id: id, name: "Second", goal: "g" })).task_id;
    // The agent writes right after the export has read its tasks page (and before its logs).
    let landed = false;
    await runInDurableObject(stub, (instance) => {
      const object = instance as unknown as Record<string, (...args: unknown[]) => Promise<unknown>> & {
        reader: Record<string, (...args: unknown[]) => Promise<unknown>>;
      };
      const reader = object.reader;
      const rows = reader.rows?.bind(reader);
      if (!rows) throw new Error("the reader has no rows");
      reader.rows = async (...args: unknown[]) => {
        const page = await rows(...args);
        if (args[1] === "tasks" && !landed) {
          landed = true;
          await object.completeTask?.(ACME, { task_id: first, status: "failed", outcome: { summary: "Late" } });
          await object.logDecision?.(ACME, { task_id: second, category: "other", question: "Late?", chosen: "yes", reasoning: "r" });
        }
        return page;
      };
    });
    const doc = await exportOf(id);
    expect(landed).toBe(true);
    expect(doc.events.length).toBe(doc.chain.events + 2);
    expect(doc.decisions).toHaveLength(1);
    const result = await check(doc);
    expect(result.problems).toEqual([]);
    expect(result).toMatchObject({ read_at: doc.chain.events, events: doc.chain.events + 2, signature: { status: "ok" } });
  });
});
