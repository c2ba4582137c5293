/**
 * @module pages/insights-page
 * The dashboard's Insights page (`/dashboard/insights`, docs/insights.md): per agent, model and
 * repository over a chosen period, what the agents claimed next to what was observed, each figure
 * with the tasks it rests on and where its evidence came from; a trend chart and a comparison of
 * two groups (the difference, its 95% interval, and whether the data can tell them apart). Each
 * chart is followed by a table of its numbers. A GET form chooses the period, grouping, filters,
 * trend and comparison, so the page works without script. Escaped like every page.
 */

import {
  INSIGHT_DIMENSIONS,
  INSIGHT_FIGURES,
  type InsightDimension,
  type InsightFigureId,
  TREND_FIGURES,
} from "@waymark/protocol/insight-members";
import {
  basisText,
  comparisonText,
  FIGURE_WORDS,
  figureLabel,
  formatFigureValue,
  SOURCE_WORDS,
  sourcesText,
} from "@waymark/protocol/insights-wording";
import type { InsightFigure, InsightGroup, Insights } from "@waymark/protocol/views/insights";
import { html } from "hono/html";
import type { InsightChoices } from "../account/insights";
import { accountNav, layout } from "./dashboard";
import { CHART_SERIES, CHART_STYLE, differenceChart, swatch, trendChart } from "./insights-charts";

type Html = ReturnType<typeof html>;

/** The form's values as the page was asked for them (what its links and the CSV/JSON links repeat). */
export interface InsightsForm {
  days: string;
  from: string;
  to: string;
  by: InsightDimension[];
  agent: string;
  model: string;
  repository: string;
  trend: InsightFigureId;
  a: string;
  b: string;
}

export interface InsightsPageData {
  account: string;
  insights: Insights;
  form: InsightsForm;
  choices: InsightChoices;
}

const PERIODS = [
  { days: "7", label: "last 7 days" },
  { days: "30", label: "last 30 days" },
  { days: "90", label: "last 90 days" },
  { days: "365", label: "last 365 days" },
];

/** The figures of the comparison table and the CI line, in the order the page shows them. */
const TABLE_FIGURES: readonly InsightFigureId[] = INSIGHT_FIGURES.filter((id) => id !== "tasks");

/** The query string of the form's values (empty ones left out). */
export function insightsQuery(form: InsightsForm): string {
  const params = new URLSearchParams();
  if (form.from || form.to) {
    if (form.from) params.set("from", form.from);
    if (form.to) params.set("to", form.to);
  } else if (form.days) params.set("days", form.days);
  params.set("by", form.by.join(","));
  for (const key of ["agent", "model", "repository", "a", "b"] as const) if (form[key]) params.set(key, form[key]);
  params.set("trend", form.trend);
  return params.toString();
}

const selected = (on: boolean) => (on ? html` selected` : "");
const checked = (on: boolean) => (on ? html` checked` : "");
const repoName = (r: { fingerprint: string; remote: string | null }) => r.remote ?? `local repository ${r.fingerprint.slice(0, 12)}`;

function renderForm(d: InsightsPageData): Html {
  const f = d.form;
  const choice = (name: "agent" | "model", label: string, values: string[]) =>
    html`<label>${label}<select name="${name}"><option value="">any</option>${values.map(
      (v) => html`<option value="${v}"${selected(f[name] === v)}>${v}</option>`,
    )}</select></label>`;
  return html`<form class="filters" method="get" action="/dashboard/insights" aria-label="What the figures cover">
<label>Period<select name="days">${PERIODS.map((p) => html`<option value="${p.days}"${selected(!f.from && !f.to && f.days === p.days)}>${p.label}</option>`)}</select></label>
<label>From (UTC day)<input type="date" name="from" value="${f.from}"></label>
<label>To (UTC day)<input type="date" name="to" value="${f.to}"></label>
<fieldset class="by"><legend>Group by</legend>${INSIGHT_DIMENSIONS.map(
    (dimension) =>
      html`<label class="check"><input type="checkbox" name="by" value="${dimension}"${checked(f.by.includes(dimension))}> ${dimension}</label>`,
  )}</fieldset>
${choice("agent", "Agent", d.choices.agents)}
${choice("model", "Model", d.choices.models)}
<label>Repository<select name="repository"><option value="">any</option>${d.choices.repositories.map(
    (r) => html`<option value="${r.fingerprint}"${selected(f.repository === r.fingerprint)}>${repoName(r)}</option>`,
  )}</select></label>
<label>Trend of<select name="trend">${TREND_FIGURES.map((id) => html`<option value="${id}"${selected(f.trend === id)}>${FIGURE_WORDS[id].short}</option>`)}</select></label>
<button type="submit">Show</button> <a href="/dashboard/insights">Reset</a>
</form>`;
}

/** One figure in a cell: its value and interval, then what it rests on and where its evidence came from. */
function figureCell(figure: InsightFigure | undefined, label: string): Html {
  if (!figure) return html`<td data-label="${label}">—</td>`;
  if (figure.value === null)
    return html`<td data-label="${label}"><span class="muted">not shown</span><br><span class="basis">${figure.withheld ?? "nothing to compute it from"}</span></td>`;
  const sources = sourcesText(figure.sources);
  const interval = figure.interval
    ? html` <span class="muted">(95% CI ${formatFigureValue(figure.unit, figure.interval.low)}–${formatFigureValue(figure.unit, figure.interval.high)})</span>`
    : "";
  return html`<td data-label="${label}"><b>${formatFigureValue(figure.unit, figure.value)}</b>${interval}<br><span class="basis">${basisText(figure)}${sources ? html`<br>${sources}` : ""}</span></td>`;
}

const figureOf = (group: InsightGroup, id: InsightFigureId) => group.figures.find((f) => f.id === id);

/** The comparison table: one row per figure, one column per group (the total first). */
function renderTable(insights: Insights): Html {
  const groups = [insights.total, ...insights.groups];
  return html`<div class="scroll" role="region" aria-labelledby="figures-title" tabindex="0"><table class="insights">
<caption id="figures-title">Figures per group, ${insights.period.from} to ${insights.period.to}</caption>
<thead><tr><th scope="col">Figure</th>${groups.map((g, i) => html`<th scope="col">${i > 0 && i <= CHART_SERIES ? swatch(i - 1) : ""}${g.label}</th>`)}</tr></thead>
<tbody><tr><th scope="row">${FIGURE_WORDS.tasks.label}</th>${groups.map((g) => html`<td data-label="${g.label}"><b>${g.tasks.toLocaleString("en-US")}</b></td>`)}</tr>
${TABLE_FIGURES.map(
  (id) =>
    html`<tr><th scope="row">${figureLabel(id, insights.durability_days)}</th>${groups.map((g) => figureCell(figureOf(g, id), g.label))}</tr>`,
)}</tbody></table></div>`;
}

/** The trend chart, its legend, and its numbers as a table. */
function renderTrend(insights: Insights): Html {
  const { trend } = insights;
  const unit = insights.total.figures.find((f) => f.id === trend.figure)?.unit ?? "share";
  const title = `${figureLabel(trend.figure, insights.durability_days)}, by ${trend.bucket}`;
  const shown = insights.groups.slice(0, CHART_SERIES);
  return html`<section aria-labelledby="trend-title"><h2 id="trend-title">Trend: ${title}</h2>
${insights.groups.length > CHART_SERIES ? html`<p class="muted">The chart draws the ${CHART_SERIES} groups with the most tasks; the table lists all of them.</p>` : ""}
<ul class="legend-list">${shown.map((g, i) => html`<li>${swatch(i)}${g.label}</li>`)}</ul>
${trendChart(insights)}
<p class="muted">A gap: fewer than ${insights.minimum_tasks} tasks in that ${trend.bucket} to show the figure from. The table leaves out the ${trend.bucket}s without any task.</p>
<div class="scroll" role="region" aria-labelledby="trend-table-title" tabindex="0"><table class="insights">
<caption id="trend-table-title">Numbers of the trend chart: ${title}</caption>
<thead><tr><th scope="col">${trend.bucket === "day" ? "Day" : `${trend.bucket[0]?.toUpperCase()}${trend.bucket.slice(1)} from`}</th>${insights.groups.map(
    (g) => html`<th scope="col">${g.label}</th>`,
  )}</tr></thead>
<tbody>${trend.points
    .filter((point) => point.values.some((v) => v.rests_on > 0))
    .map(
      (point) =>
        html`<tr><th scope="row">${point.start === point.end ? point.start : `${point.start} to ${point.end}`}</th>${point.values.map(
          (v, i) => {
            const label = insights.groups[i]?.label ?? "";
            return v.value === null
              ? html`<td data-label="${label}"><span class="muted">${v.rests_on === 0 ? "no tasks" : `not shown (${v.rests_on} tasks)`}</span></td>`
              : html`<td data-label="${label}">${formatFigureValue(unit, v.value)} <span class="muted">(${v.rests_on} tasks)</span></td>`;
          },
        )}</tr>`,
    )}</tbody></table></div></section>`;
}

/** Two groups side by side: the difference of each figure, its 95% interval, and whether the data can tell them apart. */
function renderComparison(insights: Insights, form: InsightsForm): Html {
  const comparison = insights.comparison;
  if (!comparison)
    return html`<section aria-labelledby="compare-title"><h2 id="compare-title">Compare two groups</h2><p class="muted">There is one group in this period: nothing to compare.</p></section>`;
  const a = insights.groups[comparison.a] as InsightGroup;
  const b = insights.groups[comparison.b] as InsightGroup;
  const unitOf = (id: InsightFigureId) => insights.total.figures.find((f) => f.id === id)?.unit ?? "share";
  const shares = comparison.rows.filter((row) => unitOf(row.figure) === "share");
  const pick = (name: "a" | "b", current: InsightGroup) =>
    html`<label>${name === "a" ? "First" : "Second"}<select name="${name}">${insights.groups.map(
      (g) => html`<option value="${g.id}"${selected(g.id === current.id)}>${g.label}</option>`,
    )}</select></label>`;
  const kept = { ...form, a: "", b: "" };
  const hidden = new URLSearchParams(insightsQuery(kept));
  return html`<section aria-labelledby="compare-title"><h2 id="compare-title">Compare: ${a.label} against ${b.label}</h2>
<form class="filters" method="get" action="/dashboard/insights" aria-label="Which groups to compare">${[...hidden.entries()].map(
    ([name, value]) => html`<input type="hidden" name="${name}" value="${value}">`,
  )}${pick("a", a)}${pick("b", b)}<button type="submit">Compare</button></form>
<p class="muted">Each difference is the first group's figure minus the second's, with its 95% confidence interval: Newcombe's hybrid score interval for a share of tasks, Welch's for a mean, the delta method for a share of lines. An interval that holds zero means the data cannot tell the two apart.</p>
<h3 class="label" id="diff-chart-title">Differences of the shares, in percentage points</h3>
${differenceChart(shares)}
<div class="scroll" role="region" aria-labelledby="compare-table-title" tabindex="0"><table class="insights">
<caption id="compare-table-title">Numbers of the comparison: ${a.label} against ${b.label}</caption>
<thead><tr><th scope="col">Figure</th><th scope="col">${a.label}</th><th scope="col">${b.label}</th><th scope="col">Difference (95% CI) and what it says</th></tr></thead>
<tbody>${comparison.rows.map((row) => {
    const unit = unitOf(row.figure);
    const value = (v: number | null) => (v === null ? html`<span class="muted">not shown</span>` : formatFigureValue(unit, v));
    return html`<tr class="${row.verdict === "cannot_tell_apart" ? "unclear" : ""}"><th scope="row">${figureLabel(row.figure, insights.durability_days)}</th><td data-label="${a.label}">${value(row.a)}</td><td data-label="${b.label}">${value(row.b)}</td><td data-label="difference">${comparisonText(row, unit, a.label, b.label)}</td></tr>`;
  })}</tbody></table></div></section>`;
}

function renderSources(insights: Insights): Html {
  return html`<section aria-labelledby="sources-title"><h2 id="sources-title">Where the figures come from</h2>
<ul class="sources">
<li><b>${SOURCE_WORDS.observed}</b>: a person's verdict, given on the workflow's page; Waymark saw it itself.</li>
<li><b>${SOURCE_WORDS.signed}</b>: computed by the Waymark helper on a device the account approved, its signature checked.</li>
<li><b>${SOURCE_WORDS.claimed}</b>: what the agent said of its own work ("success"), or what a client sent without an approved device's signature.</li>
<li><b>${SOURCE_WORDS.not_observed}</b>: nothing observed it (no helper, no hooks, no declared areas): such tasks are left out of the figure, never counted as a failure.</li>
</ul>
<p class="muted">Tasks are top-level tasks completed in the period (subtasks are part of them). No figure is shown from fewer than ${insights.minimum_tasks} tasks. Durability is observed by the helper with git when later tasks complete in the same repository; "${insights.durability_days} days later" reads the first observation ${insights.durability_days} or more days after the task.</p></section>`;
}

export const INSIGHTS_STYLE = `${CHART_STYLE}
.filters fieldset.by{border:0;padding:0;margin:0;display:flex;gap:8px;align-items:center}.filters fieldset.by legend{font-size:.8rem;color:var(--muted);float:left;margin-right:4px}
.scroll{overflow-x:auto;margin:6px 0}.scroll:focus-visible{outline:2px solid var(--run);outline-offset:2px}
table.insights{min-width:480px}table.insights caption{text-align:left;font-weight:600;padding:4px 0}table.insights th{white-space:normal}table.insights th[scope=row]{font-weight:600;min-width:160px;max-width:260px}
table.insights .basis{font-size:.78rem;color:var(--muted)}tr.unclear td{color:var(--muted)}
.legend-list{list-style:none;padding:0;display:flex;flex-wrap:wrap;gap:4px 16px;font-size:.9rem}.sources li{margin:.2em 0}
.downloads a{display:inline-block;min-height:24px;line-height:20px;padding:2px 0;margin-right:12px}
@media (max-width:640px){table.insights{min-width:0}}
`;

export function renderInsightsPage(nonce: string, d: InsightsPageData): Html {
  const { insights } = d;
  const query = insightsQuery(d.form);
  return layout(
    nonce,
    "Insights",
    html`${accountNav(d.account, "insights")}
<h1 id="main-content" tabindex="-1">Insights</h1>
<p>What each agent and model claimed of its work next to what was observed: tests, declared areas, people's verdicts, its lines and their durability, cost. From ${insights.period.from} to ${insights.period.to} (${insights.period.days} days, UTC): ${insights.total.tasks.toLocaleString("en-US")} tasks completed.</p>
${renderForm(d)}
<p class="downloads"><a href="/api/insights.csv?${query}" download>Download these figures as CSV</a><a href="/api/insights?${query}">as JSON</a></p>
${insights.groups.length === 0 ? html`<p class="muted">No task completed in this period${d.form.agent || d.form.model || d.form.repository ? " matches these filters" : ""}.</p>` : html`${renderTable(insights)}${renderTrend(insights)}${renderComparison(insights, d.form)}`}
${renderSources(insights)}`,
    INSIGHTS_STYLE,
  );
}
