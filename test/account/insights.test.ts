import { env, runInDurableObject } from "cloudflare:test";
import type { InsightFigure, InsightFigureId, InsightGroup, Insights } from "@waymark/protocol/views/insights";
import { insightsSchema } from "@waymark/protocol/views/insights";
import { describe, expect, it } from "vitest";
import type { AccountObject } from "../../src/account/account-object";
import type { InsightDurabilityFact, InsightFacts, InsightTaskFact, InsightVerdictFact } from "../../src/domain/insight-facts";
import type { InsightRequest } from "../../src/domain/insight-view";
import { LIMITS } from "../../src/limits";
import { meter } from "../../src/meter";
import { workflowSummary } from "./fixtures";

/**
 * The Insights rollups as the account object keeps them, fed the way workflow objects feed them
 * (`recordWorkflow` pushes carrying facts) and read through its RPC: figures per group with their
 * sources and the tasks they rest on, the minimum, replays that change nothing, verdicts and
 * durability arriving after a task, periods and trends, filters, and the bound on groups.
 */
const REPO_A = "a".repeat(64);
const REPO_B = "b".repeat(64);
const DAY = 86_400_000;
const at = (day: number, minutes = 0) => new Date(Date.UTC(2026, 9, 1) + day * DAY + minutes * 60_000).toISOString();

let sequence = 0;
function task(overrides: Partial<InsightTaskFact> = {}): InsightTaskFact {
  sequence++;
  return {
    task_id: `tk_${String(sequence).padStart(20, "a")}_aaaaaaaa`,
    workflow_id: "wf_insights",
    completed_at: at(0, sequence),
    agent: "claude-code",
    model: "claude-sonnet-4-5",
    repository: { fingerprint: REPO_A, remote: "github.com/acme/app" },
    status: "success",
    files: "signed",
    tests: "passed",
    outside_areas: false,
    areas_declared: true,
    lines: { agent: 8, others: 2, not_observed: 0 },
    usage: { cost_usd: 0.5, tokens: 1000, kind: "signed" },
    ...overrides,
  };
}

function account(name: string) {
  const stub = env.ACCOUNT.get(env.ACCOUNT.idFromName(name));
  return {
    push: (insights: InsightFacts, workflow = "wf_insights") =>
      stub.recordWorkflow(name, workflowSummary(workflow, workflow), { insights }),
    read: async (request: Partial<InsightRequest> = {}): Promise<Insights> => {
      const answer = await stub.insights({
        from: at(-1).slice(0, 10),
        to: at(40).slice(0, 10),
        by: ["agent"],
        filters: {},
        trend: "tests_passed",
        compare: null,
        ...request,
      });
      // The answer is what the API serves: it parses with the published schema.
      return insightsSchema.parse(answer);
    },
    choices: () => stub.insightChoices(),
  };
}

const groupOf = (insights: Insights, label: string): InsightGroup => {
  const group = insights.groups.find((g) => g.label === label);
  expect(group, `group ${label} in ${insights.groups.map((g) => g.label).join(", ")}`).toBeDefined();
  return group as InsightGroup;
};
const fig = (group: InsightGroup, id: InsightFigureId): InsightFigure => group.figures.find((f) => f.id === id) as InsightFigure;

describe("two agents on one repository", () => {
  const acct = account("insights-two-agents");
  const claude = Array.from({ length: 6 }, (_, i) => task({ tests: i === 5 ? "failed" : "passed" }));
  const codex = Array.from({ length: 6 }, (_, i) =>
    task({
      agent: "codex",
      model: "gpt-5.5",
      tests: "none",
      files: i < 3 ? "signed" : "claimed",
      outside_areas: i < 2,
      lines: { agent: 5, others: 5, not_observed: 1 },
      usage: { cost_usd: 0.25 * (i + 1), tokens: 2000, kind: "claimed" },
    }),
  );

  it("each group's figures say what they rest on and where their evidence came from", async () => {
    await acct.push({ tasks: [...claude, ...codex] });
    const insights = await acct.read();
    expect(insights.groups.map((g) => [g.label, g.tasks])).toEqual([
      ["claude-code", 6],
      ["codex", 6],
    ]);
    const a = groupOf(insights, "claude-code");
    const b = groupOf(insights, "codex");
    expect(fig(a, "claimed_success")).toMatchObject({ value: 1, part: 6, rests_on: 6, sources: { claimed: 6 } });
    expect(fig(a, "tests_passed")).toMatchObject({
      value: 5 / 6,
      part: 5,
      rests_on: 6,
      sources: { signed: 6, claimed: 0, not_observed: 0 },
    });
    expect(fig(b, "tests_passed")).toMatchObject({ value: 0, part: 0, rests_on: 6, sources: { signed: 3, claimed: 3, not_observed: 0 } });
    expect(fig(b, "success_unbacked")).toMatchObject({ value: 1, part: 6 });
    expect(fig(b, "outside_areas")).toMatchObject({ value: 2 / 6, part: 2, rests_on: 6 });
    expect(fig(a, "line_share")).toMatchObject({ value: 0.8, part: 48, whole: 60, rests_on: 6 });
    expect(fig(b, "line_share")).toMatchObject({ value: 0.5, part: 30, whole: 60 });
    expect(fig(b, "cost_per_task").value).toBeCloseTo((0.25 * 21) / 6, 12);
    expect(fig(b, "cost_per_task").sources).toEqual({ signed: 0, claimed: 6, not_observed: 0 });
    // Nobody reviewed: no verdict share is missing, it is 0 of 6 as Waymark saw it; no wait; nothing approved to divide by.
    expect(fig(a, "approved")).toMatchObject({ value: 0, rests_on: 6, sources: { observed: 6 } });
    expect(fig(a, "time_to_verdict")).toMatchObject({
      value: null,
      rests_on: 0,
      withheld: `fewer than ${LIMITS.INSIGHT_MIN_TASKS} tasks (0)`,
    });
    expect(fig(a, "cost_per_accepted")).toMatchObject({ value: null, withheld: "no accepted task" });
    expect(fig(a, "durability")).toMatchObject({ value: null, rests_on: 0, sources: { not_observed: 6 } });
    expect(fig(a, "tests_passed").interval?.low).toBeLessThan(5 / 6);
  });

  it("the comparison shows each difference with its interval and says when the data cannot tell them apart", async () => {
    const insights = await acct.read();
    const comparison = insights.comparison;
    expect(comparison).not.toBeNull();
    const row = (id: InsightFigureId) => comparison?.rows.find((r) => r.figure === id);
    expect(row("tests_passed")).toMatchObject({ difference: 5 / 6, method: "newcombe", verdict: "a_higher" });
    expect(row("claimed_success")).toMatchObject({ difference: 0, method: "newcombe", verdict: "cannot_tell_apart" });
    expect(row("outside_areas")?.verdict).toBe("cannot_tell_apart");
    expect(row("line_share")).toMatchObject({ method: "delta" });
    expect(row("cost_per_task")).toMatchObject({ method: "welch" });
    expect(row("time_to_verdict")?.verdict).toBe("too_few_tasks");
    // The other way round: b against a.
    const ids = insights.groups.map((g) => g.id);
    const swapped = await acct.read({ compare: { a: ids[1] as string, b: ids[0] as string } });
    expect(swapped.comparison?.rows.find((r) => r.figure === "tests_passed")?.verdict).toBe("b_higher");
  });

  it("a replayed push changes nothing", async () => {
    const before = await acct.read();
    await acct.push({ tasks: [...claude, ...codex] });
    await acct.push({ tasks: claude.slice(0, 2) });
    expect(await acct.read()).toEqual(before);
  });

  it("people's verdicts count against the task, the latest one decides, the wait runs to the first after completion", async () => {
    const verdicts: InsightVerdictFact[] = claude.map((t, i) => ({
      feedback_id: `fb_${String(i).padStart(12, "a")}`,
      task_id: t.task_id,
      verdict: i < 4 ? "approved" : "changes_requested",
      at: new Date(Date.parse(t.completed_at) + (i + 1) * 3_600_000).toISOString(),
    }));
    // Task 0 approved first, then changes requested: the latest verdict counts; the wait is to the first.
    verdicts.push({ feedback_id: "fb_zzzzzzzzzzzz", task_id: claude[0]?.task_id as string, verdict: "changes_requested", at: at(3) });
    await acct.push({ verdicts });
    await acct.push({ verdicts });
    const a = groupOf(await acct.read(), "claude-code");
    expect(fig(a, "reviewed")).toMatchObject({ value: 1, part: 6 });
    expect(fig(a, "approved")).toMatchObject({ part: 3 });
    expect(fig(a, "changes_requested")).toMatchObject({ part: 3 });
    expect(fig(a, "time_to_verdict")).toMatchObject({ value: 3.5 * 3600, rests_on: 6, sources: { observed: 6 } });
    // Three approved tasks cost $0.50 each; the six cost $3.00 in all: $1.00 per approved task.
    expect(fig(a, "cost_per_accepted")).toMatchObject({ value: 1, whole: 3, rests_on: 6 });
  });

  it("a verdict that arrives before its task is counted when the task arrives", async () => {
    const late = task({ agent: "cursor", model: "m" });
    await acct.push({ verdicts: [{ feedback_id: "fb_earlyearlyea", task_id: late.task_id, verdict: "approved", at: at(0, 500) }] });
    await acct.push({ tasks: [late] });
    const cursor = groupOf(await acct.read(), "cursor");
    // One task: withheld, and nothing of its count shown either.
    expect(fig(cursor, "approved")).toEqual({
      id: "approved",
      unit: "share",
      value: null,
      rests_on: 1,
      sources: { observed: 1 },
      withheld: `fewer than ${LIMITS.INSIGHT_MIN_TASKS} tasks (1)`,
    });
    const all = await acct.read({ by: [] });
    expect(fig(all.groups[0] as InsightGroup, "approved").part).toBe(4);
  });

  it("a verdict given while the task still ran is not one on its completed work", async () => {
    const early = task({ agent: "aider", model: "m", completed_at: at(1) });
    await acct.push({
      tasks: [early],
      verdicts: [{ feedback_id: "fb_whileitranaa", task_id: early.task_id, verdict: "approved", at: at(0, 1) }],
    });
    const aider = groupOf(await acct.read(), "aider");
    expect(fig(aider, "reviewed")).toMatchObject({ rests_on: 1, value: null });
    expect((await acct.read({ by: [], filters: { agent: "aider" } })).total.figures.find((f) => f.id === "reviewed")?.part).toBeUndefined();
    const all = await acct.read({ by: [] });
    expect(fig(all.groups[0] as InsightGroup, "reviewed").part).toBe(7);
  });

  it("durability: observations in the task's repository count, the latest and the first N days after", async () => {
    const seen = (t: InsightTaskFact, days: number, present: number, repository = REPO_A, by = "tk_later"): InsightDurabilityFact => ({
      task_id: t.task_id,
      reported_by: `${by}_${days}`,
      repository,
      at: new Date(Date.parse(t.completed_at) + days * DAY).toISOString(),
      commit: "c".repeat(40),
      recorded: 8,
      present,
      kind: "signed",
    });
    const facts: InsightDurabilityFact[] = claude.flatMap((t) => [
      seen(t, 1, 8),
      seen(t, LIMITS.INSIGHT_DURABILITY_DAYS + 1, 6),
      seen(t, LIMITS.INSIGHT_DURABILITY_DAYS + 10, 4),
    ]);
    // Another repository's observation, and a task observing itself, are not the task's durability.
    facts.push(seen(claude[0] as InsightTaskFact, 2, 0, REPO_B, "tk_elsewhere"));
    facts.push({ ...seen(claude[1] as InsightTaskFact, 2, 0), reported_by: claude[1]?.task_id as string });
    await acct.push({ durability: facts });
    await acct.push({ durability: facts });
    const a = groupOf(await acct.read(), "claude-code");
    expect(fig(a, "durability")).toMatchObject({ value: 0.5, part: 24, whole: 48, rests_on: 6, sources: { signed: 6, claimed: 0 } });
    expect(fig(a, "durability_days")).toMatchObject({ value: 0.75, part: 36, whole: 48, rests_on: 6 });
    expect(fig(groupOf(await acct.read(), "codex"), "durability").sources).toEqual({ signed: 0, claimed: 0, not_observed: 6 });
  });

  it("filters and groupings: by model and repository, one agent, one repository", async () => {
    const byModel = await acct.read({ by: ["agent", "model", "repository"] });
    expect(byModel.groups.map((g) => g.label)).toEqual([
      "claude-code · claude-sonnet-4-5 · github.com/acme/app",
      "codex · gpt-5.5 · github.com/acme/app",
      "aider · m · github.com/acme/app",
      "cursor · m · github.com/acme/app",
    ]);
    expect(byModel.groups[0]?.id).toBe(`agent=claude-code|model=claude-sonnet-4-5|repository=${REPO_A}`);
    expect(byModel.repositories).toEqual([{ fingerprint: REPO_A, remote: "github.com/acme/app" }]);
    const codexOnly = await acct.read({ filters: { agent: "codex" } });
    expect(codexOnly.groups.map((g) => g.label)).toEqual(["codex"]);
    expect(codexOnly.total.tasks).toBe(6);
    const elsewhere = await acct.read({ filters: { repository: REPO_B } });
    expect(elsewhere.groups).toEqual([]);
    expect(elsewhere.total.tasks).toBe(0);
    expect(await acct.choices()).toEqual({
      agents: ["aider", "claude-code", "codex", "cursor"],
      models: ["claude-sonnet-4-5", "gpt-5.5", "m"],
      repositories: [{ fingerprint: REPO_A, remote: "github.com/acme/app" }],
    });
  });
});

describe("periods and trends", () => {
  const acct = account("insights-periods");

  it("a period counts the tasks completed in it; the trend gives each bucket's figure, withheld below the minimum", async () => {
    // Day 0: 5 tasks passing; day 8: 5 tasks, none passing; day 20: 2 tasks.
    const tasks = [
      ...Array.from({ length: 5 }, (_, i) => task({ completed_at: at(0, i) })),
      ...Array.from({ length: 5 }, (_, i) => task({ completed_at: at(8, i), tests: "failed" })),
      ...Array.from({ length: 2 }, (_, i) => task({ completed_at: at(20, i) })),
    ];
    await acct.push({ tasks });
    const all = await acct.read({ from: at(0).slice(0, 10), to: at(29).slice(0, 10) });
    expect(all.total.tasks).toBe(12);
    expect(all.trend.bucket).toBe("day");
    expect(all.trend.points).toHaveLength(30);
    const values = all.trend.points.map((p) => p.values[0]);
    expect(values[0]).toEqual({ value: 1, rests_on: 5 });
    expect(values[8]).toEqual({ value: 0, rests_on: 5 });
    expect(values[20]).toEqual({ value: null, rests_on: 2 });
    expect(values[1]).toEqual({ value: null, rests_on: 0 });
    const later = await acct.read({ from: at(5).slice(0, 10), to: at(29).slice(0, 10) });
    expect(later.total.tasks).toBe(7);
    // 60 days: by week, Monday to Sunday, clipped to the period.
    const weeks = await acct.read({ from: at(0).slice(0, 10), to: at(59).slice(0, 10), trend: "claimed_success" });
    expect(weeks.trend.bucket).toBe("week");
    expect(weeks.trend.points[0]?.start).toBe(at(0).slice(0, 10));
    // 2026-10-01 is a Thursday: the first week ends on Sunday 2026-10-04.
    expect(weeks.trend.points[0]?.end).toBe("2026-10-04");
    expect(weeks.trend.points[1]?.start).toBe("2026-10-05");
    expect(weeks.trend.points.at(-1)?.end).toBe(at(59).slice(0, 10));
  });
});

describe("a year of rollups", () => {
  it("3,650 tasks over 365 days in 20 groups: any period's figures are its tasks' own, read from days × groups rows", async () => {
    const acct = account("insights-year");
    const tasks = Array.from({ length: 3650 }, (_, i) =>
      task({ completed_at: at(Math.floor(i / 10) - 300, i % 10), model: `model-${i % 20}`, tests: i % 3 === 0 ? "failed" : "passed" }),
    );
    for (let from = 0; from < tasks.length; from += 500) await acct.push({ tasks: tasks.slice(from, from + 500) });
    const year = await acct.read({ from: at(-300).slice(0, 10), to: at(64).slice(0, 10), by: ["model"], trend: "tests_passed" });
    expect(year.total.tasks).toBe(3650);
    expect(year.groups).toHaveLength(20);
    expect(year.trend.bucket).toBe("month");
    const passing = tasks.filter((t) => t.tests === "passed").length;
    expect(fig(year.total, "tests_passed")).toMatchObject({ part: passing, rests_on: 3650 });
    // One model, one quarter: exactly the tasks of that model completed in those days.
    const [from, to] = [at(-100).slice(0, 10), at(-10).slice(0, 10)];
    const quarter = await acct.read({ from, to, by: ["model"], filters: { model: "model-7" } });
    const expected = tasks.filter((t) => t.model === "model-7" && t.completed_at.slice(0, 10) >= from && t.completed_at.slice(0, 10) <= to);
    expect(quarter.total.tasks).toBe(expected.length);
    expect(fig(quarter.total, "tests_passed").part).toBe(expected.filter((t) => t.tests === "passed").length);
  });
});

describe("a new layout of the sums", () => {
  it("rebuilds every bucket from the tasks' rows when the object starts, to the same figures", async () => {
    const acct = account("insights-rebuild");
    await acct.push({
      tasks: Array.from({ length: 12 }, (_, i) => task({ completed_at: at(i * 3), tests: i % 4 === 0 ? "none" : "passed" })),
    });
    const request = { from: at(-1).slice(0, 10), to: at(40).slice(0, 10), by: ["agent", "model"] as const };
    const before = await acct.read({ ...request, by: [...request.by] });
    const stub = env.ACCOUNT.get(env.ACCOUNT.idFromName("insights-rebuild"));
    await runInDurableObject(stub, (instance, state) => {
      // As after an upgrade whose sums have another layout: the buckets are stale, the version older.
      state.storage.sql.exec("DELETE FROM insight_buckets");
      state.storage.sql.exec("UPDATE insight_state SET measures_version = 0");
      (instance as unknown as { rollups: { open(): void } }).rollups.open();
    });
    expect(await acct.read({ ...request, by: [...request.by] })).toEqual(before);
    expect(before.total.tasks).toBe(12);
  });
});

describe("the bound on groups", () => {
  it(`past ${LIMITS.INSIGHT_GROUPS} distinct groups, later ones are counted together`, async () => {
    const acct = account("insights-groups");
    const tasks = Array.from({ length: LIMITS.INSIGHT_GROUPS + 3 }, (_, i) => task({ model: `model-${i}` }));
    await acct.push({ tasks: tasks.slice(0, 150) });
    await acct.push({ tasks: tasks.slice(150) });
    const insights = await acct.read({ by: ["model"] });
    expect(insights.groups).toHaveLength(LIMITS.INSIGHT_GROUPS + 1);
    const other = insights.groups.find((g) => g.other);
    expect(other).toMatchObject({ tasks: 3, id: "other", label: `other groups (past the first ${LIMITS.INSIGHT_GROUPS} kept apart)` });
    // A task already counted stays where it was when it is pushed again.
    await acct.push({ tasks: tasks.slice(0, 10) });
    expect((await acct.read({ by: ["model"] })).groups.find((g) => g.other)?.tasks).toBe(3);
  });
});

describe("two years of rollups, read as the Insights page reads them", () => {
  it("every trend point is its tasks' own, from day and month rows; the rows read stay bounded by the period's plan", async () => {
    const name = "insights-two-years";
    const acct = account(name);
    const groups = 10;
    const days = 731;
    // Every group completes a task every day: the densest rollups two years can hold for ten groups.
    const tasks = Array.from({ length: days * groups }, (_, i) =>
      task({
        completed_at: at(Math.floor(i / groups) - days + 40, i % groups),
        model: `model-${i % groups}`,
        tests: i % 3 === 0 ? "failed" : "passed",
      }),
    );
    for (let from = 0; from < tasks.length; from += 1000) await acct.push({ tasks: tasks.slice(from, from + 1000) });
    const stub = env.ACCOUNT.get(env.ACCOUNT.idFromName(name));
    const reads: Record<string, number> = {};
    for (const span of [731, 182, 60, 31]) {
      const request = {
        from: at(40 - span + 1).slice(0, 10),
        to: at(40).slice(0, 10),
        by: ["model" as const],
        trend: "tests_passed" as const,
      };
      const { insights, rowsRead } = await runInDurableObject(stub, async (instance: AccountObject) => {
        const wasOn = meter.on;
        meter.on = true;
        try {
          const before = meter.read().objects.account.rows_read;
          const answer = await instance.insights({ filters: {}, compare: null, ...request });
          return { insights: answer, rowsRead: meter.read().objects.account.rows_read - before };
        } finally {
          meter.on = wasOn;
        }
      });
      reads[`${span} days (${insights.trend.bucket})`] = rowsRead;
      const inPeriod = tasks.filter((t) => t.completed_at.slice(0, 10) >= request.from && t.completed_at.slice(0, 10) <= request.to);
      expect(insights.total.tasks).toBe(inPeriod.length);
      expect(fig(insights.total, "tests_passed").part).toBe(inPeriod.filter((t) => t.tests === "passed").length);
      // Each point of the trend, each group's value: exactly that group's tasks completed within its span.
      for (const point of insights.trend.points) {
        insights.groups.forEach((group, g) => {
          const inPoint = inPeriod.filter(
            (t) => t.model === group.label && t.completed_at.slice(0, 10) >= point.start && t.completed_at.slice(0, 10) <= point.end,
          );
          expect(point.values[g]?.rests_on, `${span} days, ${point.start}, ${group.label}`).toBe(inPoint.length);
        });
      }
    }
    console.log("Insights rows read at two years of ten groups", reads);
    // The plan's buckets per group, each read once (a week trend reads its days: up to 182 a group), and a few rows more.
    expect(reads["182 days (week)"]).toBeLessThanOrEqual(182 * groups + 20);
    expect(reads["731 days (month)"]).toBeLessThanOrEqual((24 + 62) * groups + 20);
  });
});
