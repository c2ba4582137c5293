/**
 * @module pages/insights-csv
 * The Insights as CSV (`GET /api/insights.csv`, docs/insights.md): one row per group and figure
 * (the "all tasks" group first), RFC 4180 quoting. Group names are the agents' and clients' own
 * words (an agent's name, a model, a repository's remote): a spreadsheet would run one that starts
 * like a formula (`=HYPERLINK(…)`), so every text cell that starts with `=`, `+`, `-`, `@`, a tab
 * or a carriage return gets a leading apostrophe, as OWASP's CSV injection guidance says; numbers
 * are written by Waymark and left as they are.
 */
import { INSIGHT_SOURCES } from "@waymark/protocol/insight-members";
import type { InsightGroup, Insights } from "@waymark/protocol/views/insights";

export const CSV_COLUMNS = [
  "period_from",
  "period_to",
  "group",
  "agent",
  "model",
  "repository",
  "repository_remote",
  "figure",
  "unit",
  "value",
  "rests_on",
  "part",
  "whole",
  "ci_low",
  "ci_high",
  ...INSIGHT_SOURCES,
  "withheld",
] as const;

const FORMULA_START = /^[=+\-@\t\r]/;

/** A text cell: neutralised if a spreadsheet would read it as a formula, quoted, quotes doubled. */
export function textCell(value: string | null | undefined): string {
  if (value === null || value === undefined || value === "") return "";
  const safe = FORMULA_START.test(value) ? `'${value}` : value;
  return `"${safe.replaceAll('"', '""')}"`;
}

const numberCell = (value: number | null | undefined) => (value === null || value === undefined ? "" : String(value));

function groupRows(insights: Insights, group: InsightGroup, remotes: ReadonlyMap<string, string | null>): string[] {
  const repository = group.key.repository ?? null;
  return group.figures.map((figure) =>
    [
      insights.period.from,
      insights.period.to,
      textCell(group.label),
      textCell(group.key.agent),
      textCell(group.key.model),
      repository ?? "",
      textCell(repository ? remotes.get(repository) : null),
      figure.id,
      figure.unit,
      numberCell(figure.value),
      numberCell(figure.rests_on),
      numberCell(figure.part),
      numberCell(figure.whole),
      numberCell(figure.interval?.low),
      numberCell(figure.interval?.high),
      ...INSIGHT_SOURCES.map((source) => numberCell(figure.sources[source])),
      textCell(figure.withheld),
    ].join(","),
  );
}

/** The whole CSV: a header line, then the rows, CRLF line ends. */
export function insightsCsv(insights: Insights): string {
  const remotes = new Map(insights.repositories.map((r) => [r.fingerprint, r.remote]));
  const lines = [CSV_COLUMNS.join(","), ...[insights.total, ...insights.groups].flatMap((group) => groupRows(insights, group, remotes))];
  return `${lines.join("\r\n")}\r\n`;
}
