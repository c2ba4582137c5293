/**
 * @module pages/insights-charts
 * The Insights page's two charts as server-rendered SVG (no script, no chart library): a figure's
 * trend per group over the period, and the differences between two groups with their 95%
 * intervals. Each SVG is hidden from assistive technology because the table that follows it on
 * the page holds the same numbers; groups differ by marker shape and dash pattern as well as by
 * colour, and colours come from the page's stylesheet (light and dark). Every text is escaped by
 * hono/html; every coordinate is a number computed here.
 */
import { FIGURE_WORDS, formatFigureValue } from "@waymark/protocol/insights-wording";
import type { InsightComparison, Insights } from "@waymark/protocol/views/insights";
import { html } from "hono/html";

type Html = ReturnType<typeof html>;

/** Groups drawn in the trend (the table lists them all). */
export const CHART_SERIES = 6;

const WIDTH = 640;
const HEIGHT = 240;
const PAD = { left: 56, right: 12, top: 12, bottom: 36 };

/** A marker per series: circle, square, triangle, diamond, cross, ring (shapes, so groups differ without colour). */
function marker(series: number, x: number, y: number): string {
  const r = 4.5;
  switch (series % CHART_SERIES) {
    case 0:
      return `M${x - r},${y}a${r},${r} 0 1,0 ${2 * r},0a${r},${r} 0 1,0 ${-2 * r},0`;
    case 1:
      return `M${x - r},${y - r}h${2 * r}v${2 * r}h${-2 * r}z`;
    case 2:
      return `M${x},${y - r - 1}L${x + r + 1},${y + r}L${x - r - 1},${y + r}z`;
    case 3:
      return `M${x},${y - r - 1}L${x + r + 1},${y}L${x},${y + r + 1}L${x - r - 1},${y}z`;
    case 4:
      return `M${x - r},${y - r}L${x + r},${y + r}M${x + r},${y - r}L${x - r},${y + r}`;
    default:
      return `M${x - r},${y}a${r},${r} 0 1,0 ${2 * r},0a${r},${r} 0 1,0 ${-2 * r},0M${x - 1.5},${y}h3`;
  }
}

const round = (n: number) => Math.round(n * 10) / 10;

/** A swatch of a series for the legend (its colour, dash and marker), hidden from assistive technology. */
export function swatch(series: number): Html {
  return html`<svg class="swatch" viewBox="0 0 28 12" width="28" height="12" aria-hidden="true" focusable="false"><path class="line s${series % CHART_SERIES} d${series % CHART_SERIES}" d="M1,6H27"></path><path class="mark s${series % CHART_SERIES}${series % CHART_SERIES === 4 ? " open" : ""}" d="${marker(series, 14, 6)}"></path></svg>`;
}

/** The trend's line chart: one line per group (the first CHART_SERIES), a gap where a bucket's figure is withheld. */
export function trendChart(insights: Insights): Html {
  const { trend } = insights;
  const unit = insights.groups[0]?.figures.find((f) => f.id === trend.figure)?.unit ?? "share";
  const shown = insights.groups.slice(0, CHART_SERIES);
  const values = trend.points.flatMap((p) => p.values.slice(0, CHART_SERIES).map((v) => v.value ?? 0));
  const top = unit === "share" ? 1 : Math.max(...values, 0) * 1.1 || 1;
  const innerW = WIDTH - PAD.left - PAD.right;
  const innerH = HEIGHT - PAD.top - PAD.bottom;
  const count = trend.points.length;
  const x = (i: number) => round(PAD.left + (count <= 1 ? innerW / 2 : (i * innerW) / (count - 1)));
  const y = (v: number) => round(PAD.top + innerH - (v / top) * innerH);
  const ticks = [0, 0.25, 0.5, 0.75, 1].map((t) => t * top);
  // At most about eight labels along the x axis.
  const every = Math.max(1, Math.ceil(count / 8));
  const lines = shown.map((_, g) => {
    let d = "";
    let pen = false;
    trend.points.forEach((point, i) => {
      const value = point.values[g]?.value ?? null;
      if (value === null) {
        pen = false;
        return;
      }
      d += `${pen ? "L" : "M"}${x(i)},${y(value)}`;
      pen = true;
    });
    return d;
  });
  return html`<svg class="chart" viewBox="0 0 ${WIDTH} ${HEIGHT}" width="100%" aria-hidden="true" focusable="false">
${ticks.map(
  (t) =>
    html`<line class="grid" x1="${PAD.left}" x2="${WIDTH - PAD.right}" y1="${y(t)}" y2="${y(t)}"></line><text x="${PAD.left - 6}" y="${y(t) + 4}" text-anchor="end">${formatFigureValue(unit, t)}</text>`,
)}
${trend.points.map((point, i) =>
  i % every === 0 ? html`<text x="${x(i)}" y="${HEIGHT - PAD.bottom + 18}" text-anchor="middle">${point.start.slice(5)}</text>` : "",
)}
<line class="axis" x1="${PAD.left}" x2="${WIDTH - PAD.right}" y1="${y(0)}" y2="${y(0)}"></line>
${lines.map((d, g) => (d ? html`<path class="line s${g} d${g}" d="${d}"></path>` : ""))}
${shown.map((_, g) =>
  trend.points.map((point, i) => {
    const value = point.values[g]?.value ?? null;
    return value === null ? "" : html`<path class="mark s${g}${g === 4 ? " open" : ""}" d="${marker(g, x(i), y(value))}"></path>`;
  }),
)}
</svg>`;
}

/** The comparison's differences in points with their intervals, a row per share figure; a zero line. */
export function differenceChart(rows: InsightComparison["rows"]): Html {
  const rowH = 26;
  const labelW = 250;
  const width = WIDTH;
  const height = PAD.top + rows.length * rowH + 30;
  // Room at the right for the last axis label, centred on its line.
  const innerW = width - labelW - PAD.right - 16;
  const x = (d: number) => round(labelW + ((d + 1) / 2) * innerW);
  return html`<svg class="chart" viewBox="0 0 ${width} ${height}" width="100%" aria-hidden="true" focusable="false">
${[-1, -0.5, 0, 0.5, 1].map(
  (t) =>
    html`<line class="${t === 0 ? "axis" : "grid"}" x1="${x(t)}" x2="${x(t)}" y1="${PAD.top - 4}" y2="${height - 26}"></line><text x="${x(t)}" y="${height - 10}" text-anchor="middle">${t > 0 ? "+" : t < 0 ? "−" : ""}${Math.abs(t * 100)}</text>`,
)}
${rows.map((row, i) => {
  const cy = PAD.top + i * rowH + rowH / 2;
  const label = html`<text x="${labelW - 8}" y="${cy + 4}" text-anchor="end">${FIGURE_WORDS[row.figure].short}</text>`;
  if (row.difference === null) return html`${label}<text x="${x(0) + 6}" y="${cy + 4}">too few tasks</text>`;
  const interval = row.interval
    ? html`<line class="ci${row.verdict === "cannot_tell_apart" ? " unclear" : ""}" x1="${x(row.interval.low)}" x2="${x(row.interval.high)}" y1="${cy}" y2="${cy}"></line>`
    : "";
  return html`${label}${interval}<path class="mark s0" d="${marker(0, x(row.difference), cy)}"></path>`;
})}
</svg>`;
}

export const CHART_STYLE = `
.chart{display:block;max-width:760px;height:auto;margin:6px 0}.chart text{fill:var(--muted);font-size:12px}
.chart .grid{stroke:var(--line);stroke-width:1}.chart .axis{stroke:var(--muted);stroke-width:1.5}
.chart .line,.swatch .line{fill:none;stroke-width:2.5}.chart .mark,.swatch .mark{stroke-width:1.5}.chart .mark.open,.swatch .mark.open{fill:none;stroke-width:2.5}
.chart .ci{stroke:var(--fg);stroke-width:3}.chart .ci.unclear{stroke:var(--muted);stroke-dasharray:4 3}
.s0{stroke:var(--run);fill:var(--run)}.s1{stroke:var(--warn);fill:var(--warn)}.s2{stroke:var(--ok);fill:var(--ok)}
.s3{stroke:var(--bad);fill:var(--bad)}.s4{stroke:var(--fg);fill:var(--fg)}.s5{stroke:var(--muted);fill:var(--muted)}
.d1{stroke-dasharray:8 4}.d2{stroke-dasharray:2 3}.d3{stroke-dasharray:10 3 2 3}.d4{stroke-dasharray:4 2}.d5{stroke-dasharray:1 4}
.swatch{vertical-align:middle;margin-right:6px}
`;
