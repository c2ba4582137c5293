/**
 * The account's quota usage (workflows, bytes stored), which every workflow's start asks for:
 * counted over every workflow once per object life, then moved by each push, so a start reads
 * the same rows however many workflows the account holds, and the usage stays what a count gives.
 */
import { env, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import type { AccountObject } from "../../src/account/account-object";
import { meter } from "../../src/meter";
import { workflowSummary } from "./fixtures";

const workflowId = (n: number) => `wf_${String(n).padStart(20, "u")}`;
const summary = (n: number, bytes: number) => ({ ...workflowSummary(workflowId(n), `Workflow ${n}`), bytes_stored: bytes });

/** What a count over the stored rows gives. */
const counted = (sql: SqlStorage) =>
  sql
    .exec<{ workflows: number; bytes_stored: number }>(
      "SELECT count(*) AS workflows, coalesce(sum(bytes_stored), 0) AS bytes_stored FROM workflows",
    )
    .one();

async function rowsRead(step: () => Promise<unknown>): Promise<number> {
  const wasOn = meter.on;
  meter.on = true;
  try {
    const before = meter.read().objects.account.rows_read;
    await step();
    return meter.read().objects.account.rows_read - before;
  } finally {
    meter.on = wasOn;
  }
}

/** An account of `workflows` workflows; the rows a start's preparation reads after the first. */
async function startReads(name: string, workflows: number): Promise<number> {
  return runInDurableObject(env.ACCOUNT.get(env.ACCOUNT.idFromName(name)), async (o: AccountObject) => {
    for (let n = 0; n < workflows; n++) await o.recordWorkflow(name, summary(n, 1000));
    const prepare = () => o.prepareWorkflow({ name: "New", fingerprint: null, origin: "https://example.com", resume: true });
    await prepare();
    await o.recordWorkflow(name, summary(0, 2000));
    return rowsRead(prepare);
  });
}

describe("the account's quota usage", () => {
  it("a workflow's start reads the same rows with 200 workflows as with 2,000", async () => {
    const small = await startReads("usage-small", 200);
    const large = await startReads("usage-large", 2000);
    // Read before by every start: every workflow's row (201 and 2,001 rows and what the rest reads).
    expect(large).toBe(small);
    expect(large).toBeLessThan(20);
  });

  it("stays what a count of the stored rows gives, through new workflows, changed sizes and a push that rolled back", async () => {
    const name = "usage-kept";
    const result = await runInDurableObject(env.ACCOUNT.get(env.ACCOUNT.idFromName(name)), async (o: AccountObject, state) => {
      await o.recordWorkflow(name, summary(1, 100));
      const seen: { kept: { workflows: number; bytes_stored: number }; stored: { workflows: number; bytes_stored: number } }[] = [];
      const check = async () => seen.push({ kept: await o.usage(), stored: counted(state.storage.sql) });
      await check();
      await o.recordWorkflow(name, summary(2, 300));
      await check();
      await o.recordWorkflow(name, summary(1, 50));
      await check();
      // Refused inside its transaction (an id over the stored-value bound): the summary's change rolls back with it.
      const huge = "x".repeat(2_100_000);
      const refused = await o
        .recordWorkflow(name, summary(3, 7000), {
          documents: [
            {
              id: huge,
              kind: "decision",
              workflow_id: workflowId(3),
              task_id: "tk_x",
              title: "t",
              body: "",
              context: "",
              text: "t",
              at: "2026-01-01T00:00:00.000Z",
            },
          ],
        })
        .then(
          () => "stored",
          (error: unknown) => String(error),
        );
      await check();
      await o.recordWorkflow(name, summary(4, 1));
      await check();
      return { seen, refused };
    });
    expect(result.refused).toMatch(/memory_fts: a value of \d+ bytes, over the/);
    for (const { kept, stored } of result.seen) expect(kept).toEqual(stored);
    expect(result.seen.map((s) => s.kept)).toEqual([
      { workflows: 1, bytes_stored: 100 },
      { workflows: 2, bytes_stored: 400 },
      { workflows: 2, bytes_stored: 350 },
      { workflows: 2, bytes_stored: 350 },
      { workflows: 3, bytes_stored: 351 },
    ]);
  });
});
