/**
 * The account's quota usage (workflows, bytes stored), which every workflow's start asks for:
 * counted over every workflow once per object life, then moved by each push, so a start reads
 * the same rows however many workflows the account holds, and the usage stays what a count gives.
 */
import { env, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import type { AccountObject } from "../../src/account/account-object";
import { SUMMARY_BYTES_LAG, SUMMARY_TIME_LAG_MS } from "../../src/account/workflow-index";
import type { ShareInfo } from "../../src/domain/share-status";
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

/** The account object's rows read or written while `step` runs. */
async function rows(field: "rows_read" | "rows_written", step: () => Promise<unknown>): Promise<number> {
  const wasOn = meter.on;
  meter.on = true;
  try {
    const before = meter.read().objects.account[field];
    await step();
    return meter.read().objects.account[field] - before;
  } finally {
    meter.on = wasOn;
  }
}
const rowsRead = (step: () => Promise<unknown>) => rows("rows_read", step);

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
      await o.recordWorkflow(name, summary(1, 500_000));
      const seen: { kept: { workflows: number; bytes_stored: number }; stored: { workflows: number; bytes_stored: number } }[] = [];
      const check = async () => seen.push({ kept: await o.usage(), stored: counted(state.storage.sql) });
      await check();
      await o.recordWorkflow(name, summary(2, 300_000));
      await check();
      await o.recordWorkflow(name, summary(1, 100_000));
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
      { workflows: 1, bytes_stored: 500_000 },
      { workflows: 2, bytes_stored: 800_000 },
      { workflows: 2, bytes_stored: 400_000 },
      { workflows: 2, bytes_stored: 400_000 },
      { workflows: 3, bytes_stored: 400_001 },
    ]);
  });

  it("a push that only moves the time and the bytes writes no summary row, and the quota's count stays within the stated bound", async () => {
    const name = "usage-lag";
    const result = await runInDurableObject(env.ACCOUNT.get(env.ACCOUNT.idFromName(name)), async (o: AccountObject, state) => {
      const start = Date.parse("2026-03-01T10:00:00.000Z");
      const at = (ms: number) => new Date(start + ms).toISOString();
      const base = { ...summary(7, 10_000), created_at: at(0), updated_at: at(0) };
      const stored = () =>
        state.storage.sql
          .exec<{ updated_at: string; bytes_stored: number; open_tasks: number }>(
            "SELECT updated_at, bytes_stored, open_tasks FROM workflows",
          )
          .one();
      const steps: { written: number; stored: { updated_at: string; bytes_stored: number; open_tasks: number } }[] = [];
      const step = async (changes: Partial<typeof base>, counts?: "may_wait" | "settle") => {
        const written = await rows("rows_written", () => o.recordWorkflow(name, { ...base, ...changes }, counts ? { counts } : {}));
        steps.push({ written, stored: { ...stored() } });
      };
      await step({});
      // A decision 10 s later: its bytes and time only.
      await step({ updated_at: at(10_000), bytes_stored: 12_000 });
      // A task's start: counts only, within the time bound. Stored at once unless the workflow's alarm is due anyway
      // (the push says the counts may wait); then that alarm's settling push stores them, and one that finds them
      // current writes nothing.
      const started = { updated_at: at(20_000), bytes_stored: 14_000, open_tasks: 1, tasks: 1 };
      await step(started, "may_wait");
      await step(started, "settle");
      await step(started, "settle");
      await step({ ...started, updated_at: at(21_000), open_tasks: 2, tasks: 2 });
      await step({ updated_at: at(30_000), bytes_stored: 14_000 + SUMMARY_BYTES_LAG - 1, open_tasks: 2, tasks: 2 });
      // Past the byte bound.
      await step({ updated_at: at(31_000), bytes_stored: 14_000 + SUMMARY_BYTES_LAG, open_tasks: 2, tasks: 2 });
      // Past the time bound.
      await step({
        updated_at: at(31_000 + SUMMARY_TIME_LAG_MS - 1),
        bytes_stored: 14_000 + SUMMARY_BYTES_LAG + 5,
        open_tasks: 2,
        tasks: 2,
      });
      await step({ updated_at: at(31_000 + SUMMARY_TIME_LAG_MS), bytes_stored: 14_000 + SUMMARY_BYTES_LAG + 9, open_tasks: 2, tasks: 2 });
      // Counts moved past the time bound are stored at once, though they might wait.
      await step(
        { updated_at: at(32_000 + 2 * SUMMARY_TIME_LAG_MS), bytes_stored: 14_000 + SUMMARY_BYTES_LAG + 9, open_tasks: 1, tasks: 2 },
        "may_wait",
      );
      // A review asked for is stored at once, whatever its time.
      await step(
        {
          updated_at: at(32_001 + 2 * SUMMARY_TIME_LAG_MS),
          bytes_stored: 14_000 + SUMMARY_BYTES_LAG + 9,
          open_tasks: 0,
          tasks: 2,
          reviews_needed: 1,
        },
        "may_wait",
      );
      // A status change is stored whatever its time.
      await step({
        updated_at: at(32_002 + 2 * SUMMARY_TIME_LAG_MS),
        bytes_stored: 14_000 + SUMMARY_BYTES_LAG + 9,
        status: "success",
        tasks: 2,
        reviews_needed: 1,
      });
      // Many small writes: what the quota counts never falls SUMMARY_BYTES_LAG behind the workflow's own count.
      let bytes = 500_000;
      let worst = 0;
      for (let n = 1; n <= 200; n++) {
        bytes += 1_000 + ((n * 7919) % 3_000);
        await o.recordWorkflow(name, { ...base, status: "success", tasks: 1, updated_at: at(300_000 + n * 500), bytes_stored: bytes });
        worst = Math.max(worst, bytes - (await o.usage()).bytes_stored);
        expect(await o.usage()).toEqual(counted(state.storage.sql));
      }
      return { steps, worst };
    });
    // A new row also writes its resume-key entry (2; 3 before v20 keyed the table by its id alone); a completion
    // takes that entry out (1 since v21, which keeps open workflows only in it; 2 before); any other update is 1.
    expect(result.steps.map((s) => s.written)).toEqual([2, 0, 0, 1, 0, 1, 0, 1, 0, 1, 1, 1, 1]);
    const row = (ms: number, bytes: number, open: number) => ({
      updated_at: new Date(Date.parse("2026-03-01T10:00:00.000Z") + ms).toISOString(),
      bytes_stored: bytes,
      open_tasks: open,
    });
    expect(result.steps.map((s) => s.stored)).toEqual([
      row(0, 10_000, 0),
      row(0, 10_000, 0),
      row(0, 10_000, 0),
      row(20_000, 14_000, 1),
      row(20_000, 14_000, 1),
      row(21_000, 14_000, 2),
      row(21_000, 14_000, 2),
      row(31_000, 14_000 + SUMMARY_BYTES_LAG, 2),
      row(31_000, 14_000 + SUMMARY_BYTES_LAG, 2),
      row(31_000 + SUMMARY_TIME_LAG_MS, 14_000 + SUMMARY_BYTES_LAG + 9, 2),
      row(32_000 + 2 * SUMMARY_TIME_LAG_MS, 14_000 + SUMMARY_BYTES_LAG + 9, 1),
      row(32_001 + 2 * SUMMARY_TIME_LAG_MS, 14_000 + SUMMARY_BYTES_LAG + 9, 0),
      row(32_002 + 2 * SUMMARY_TIME_LAG_MS, 14_000 + SUMMARY_BYTES_LAG + 9, 0),
    ]);
    expect(result.worst).toBeGreaterThan(0);
    expect(result.worst).toBeLessThan(SUMMARY_BYTES_LAG);
  });

  it("a new workflow's link state rides in its summary's row; a later one is stored whatever else the push changes", async () => {
    const name = "usage-share";
    const result = await runInDurableObject(env.ACCOUNT.get(env.ACCOUNT.idFromName(name)), async (o: AccountObject) => {
      const link: ShareInfo = {
        status: "active",
        token: null,
        created_at: "2026-03-01T10:00:00.000Z",
        expires_at: "2099-01-01T00:00:00.000Z",
        revoked_at: null,
      };
      const base = summary(8, 1000);
      const written = [await rows("rows_written", () => o.recordWorkflow(name, base, { share: link }))];
      const share = async () => (await o.dashboardRows()).find((row) => row.id === base.id)?.share;
      const created = await share();
      // Revoked, with nothing else changed (a push the summary alone would skip).
      const revoked: ShareInfo = { ...link, status: "revoked", revoked_at: "2026-03-01T10:00:05.000Z" };
      written.push(await rows("rows_written", () => o.recordWorkflow(name, base, { share: revoked })));
      const afterRevoke = await share();
      // With a status change (the whole upsert).
      await o.recordWorkflow(name, { ...base, status: "success" }, { share: link });
      return { written, created, afterRevoke, last: await share() };
    });
    // The row and its resume-key entry: the link costs no row of its own.
    expect(result.written[0]).toBe(2);
    expect(result.created).toEqual({
      status: "active",
      ...{ created_at: "2026-03-01T10:00:00.000Z", expires_at: "2099-01-01T00:00:00.000Z", revoked_at: null },
    });
    expect(result.afterRevoke?.status).toBe("revoked");
    expect(result.last?.status).toBe("active");
  });
});
