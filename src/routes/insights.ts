/**
 * @module routes/insights
 * The account's Insights (docs/insights.md), mounted by src/index.ts:
 *   GET /api/insights?days=|from=&to=&by=&agent=&model=&repository=&trend=&a=&b=
 *                                 the figures as JSON (@waymark/protocol/views/insights); bearer or session (read)
 *   GET /api/insights.csv?…       the same figures as CSV, one row per group and figure; bearer or session (read)
 *   GET /dashboard/insights?…     the Insights page; the dashboard session (read)
 * The figures are summed from the account's rollups (account/insights), never from its tasks.
 * Bad input answers `field: rule` (JSON `{code, message}` for the API, plain text for the page).
 */

import { INSIGHT_DIMENSIONS, type InsightDimension, type InsightFigureId, TREND_FIGURES } from "@waymark/protocol/insight-members";
import { type Context, Hono } from "hono";
import type { InsightRequest } from "../domain/insight-view";
import { apiError } from "../http/api-errors";
import { requireAccount } from "../http/require-account";
import { dataHeaders, noStore, pageHeaders } from "../http/security-headers";
import type { AppEnv } from "../http/types";
import { LIMITS } from "../limits";
import { revealBidiControls } from "../pages/format";
import { insightsCsv } from "../pages/insights-csv";
import { type InsightsForm, renderInsightsPage } from "../pages/insights-page";
import { accountStub } from "../stubs";
import { dashboardReader, nonceOf } from "./forms";

export const insightRoutes = new Hono<AppEnv>();

const apiReader = requireAccount({ bearer: true, session: true, otherwise: "json", action: "workflow.read" });

for (const path of ["/api/insights", "/api/insights.csv"]) insightRoutes.use(path, noStore, dataHeaders);
insightRoutes.use("/dashboard/insights", noStore);

const DEFAULT_DAYS = 30;
const DEFAULT_BY: InsightDimension[] = ["agent", "model"];
const DEFAULT_TREND: InsightFigureId = "tests_passed";
const DAY = /^\d{4}-\d{2}-\d{2}$/;
const DAY_MS = 86_400_000;
const CONTROL = /[\u0000-\u001f\u007f]/;
const isDay = (text: string) => DAY.test(text) && new Date(`${text}T00:00:00Z`).toISOString().slice(0, 10) === text;
const shift = (day: string, days: number) => new Date(Date.parse(`${day}T00:00:00Z`) + days * DAY_MS).toISOString().slice(0, 10);

type Parsed = { ok: true; request: InsightRequest; form: InsightsForm } | { ok: false; problem: string };

/** The query's one value of `name`, "" when absent. */
const one = (c: Context<AppEnv>, name: string) => c.req.query(name) ?? "";

/**
 * The request the query asks for. Empty values are absent (a GET form sends every field): the
 * period is `from`–`to` (UTC days, inclusive), else the last `days` days to `to` or today
 * (default 30); `by` is a comma list or repeated (default agent,model; `none`: one group).
 */
function parseQuery(c: Context<AppEnv>): Parsed {
  const fail = (problem: string): Parsed => ({ ok: false, problem });
  const daysText = one(c, "days");
  if (daysText && !/^\d{1,4}$/.test(daysText)) return fail(`days: must be a whole number from 1 to ${LIMITS.INSIGHT_PERIOD_DAYS}`);
  const days = daysText ? Number(daysText) : DEFAULT_DAYS;
  if (days < 1 || days > LIMITS.INSIGHT_PERIOD_DAYS) return fail(`days: must be a whole number from 1 to ${LIMITS.INSIGHT_PERIOD_DAYS}`);
  const fromText = one(c, "from");
  const toText = one(c, "to");
  for (const [field, value] of [
    ["from", fromText],
    ["to", toText],
  ] as const)
    if (value && !isDay(value)) return fail(`${field}: must be a day as YYYY-MM-DD`);
  const today = new Date().toISOString().slice(0, 10);
  const to = toText || today;
  const from = fromText || shift(to, 1 - days);
  if (from > to) return fail("from: must not be after to");
  const span = (Date.parse(`${to}T00:00:00Z`) - Date.parse(`${from}T00:00:00Z`)) / DAY_MS + 1;
  if (span > LIMITS.INSIGHT_PERIOD_DAYS) return fail(`from: the period must span at most ${LIMITS.INSIGHT_PERIOD_DAYS} days`);

  const byValues = (c.req.queries("by") ?? []).flatMap((value) => value.split(",")).map((value) => value.trim());
  let by: InsightDimension[] = DEFAULT_BY;
  if (byValues.length > 0 && !(byValues.length === 1 && byValues[0] === "")) {
    if (byValues.includes("none")) by = [];
    else {
      const unknown = byValues.find((value) => !(INSIGHT_DIMENSIONS as readonly string[]).includes(value));
      if (unknown !== undefined) return fail(`by: must list ${INSIGHT_DIMENSIONS.join(", ")} (comma-separated), or none`);
      by = INSIGHT_DIMENSIONS.filter((dimension) => byValues.includes(dimension));
    }
  }

  const filters: InsightRequest["filters"] = {};
  for (const field of ["agent", "model"] as const) {
    const value = one(c, field);
    if (!value) continue;
    if (value.length > LIMITS.INSIGHT_NAME_CHARS || CONTROL.test(value) || !value.isWellFormed())
      return fail(`${field}: must be text of at most ${LIMITS.INSIGHT_NAME_CHARS} characters without control characters`);
    filters[field] = value;
  }
  const repository = one(c, "repository");
  if (repository) {
    if (!/^[0-9a-f]{64}$/.test(repository)) return fail("repository: must be a repository fingerprint (64 lowercase hex digits)");
    filters.repository = repository;
  }
  const trendText = one(c, "trend");
  if (trendText && !(TREND_FIGURES as readonly string[]).includes(trendText))
    return fail(`trend: must be one of ${TREND_FIGURES.join(", ")}`);
  const trend = (trendText || DEFAULT_TREND) as InsightFigureId;
  const a = one(c, "a");
  const b = one(c, "b");
  for (const [field, value] of [
    ["a", a],
    ["b", b],
  ] as const)
    if (value.length > 2000 || CONTROL.test(value)) return fail(`${field}: must be a group id from the answer's groups`);

  return {
    ok: true,
    request: { from, to, by, filters, trend, compare: a && b ? { a, b } : null },
    form: {
      days: String(days),
      from: fromText,
      to: toText,
      by,
      agent: filters.agent ?? "",
      model: filters.model ?? "",
      repository: filters.repository ?? "",
      trend,
      a,
      b,
    },
  };
}

insightRoutes.get("/api/insights", apiReader, async (c) => {
  const parsed = parseQuery(c);
  if (!parsed.ok) return apiError(c, "INPUT_VALIDATION_ERROR", parsed.problem);
  return c.json(await accountStub(c.env, c.var.account).insights(parsed.request));
});

insightRoutes.get("/api/insights.csv", apiReader, async (c) => {
  const parsed = parseQuery(c);
  if (!parsed.ok) return apiError(c, "INPUT_VALIDATION_ERROR", parsed.problem);
  const insights = await accountStub(c.env, c.var.account).insights(parsed.request);
  return c.body(insightsCsv(insights), 200, {
    "Content-Type": "text/csv; charset=utf-8",
    "Content-Disposition": `attachment; filename="waymark-insights-${insights.period.from}-${insights.period.to}.csv"`,
  });
});

insightRoutes.get("/dashboard/insights", pageHeaders, dashboardReader, async (c) => {
  const parsed = parseQuery(c);
  if (!parsed.ok) return c.text(parsed.problem, 400);
  const account = accountStub(c.env, c.var.account);
  const [insights, choices] = await Promise.all([account.insights(parsed.request), account.insightChoices()]);
  // Group names are agents' and clients' words: bidi controls become visible code points, as on every page.
  return c.html(
    revealBidiControls(String(await renderInsightsPage(nonceOf(c), { account: c.var.account, insights, form: parsed.form, choices }))),
  );
});
