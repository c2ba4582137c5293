/**
 * The one table `npm run bench` prints: rows of measured figures, each with the floor it is
 * compared with (measured in the same run), the ratio, and the target it is held to with a
 * met / not met verdict. Slowness never fails the bench; it is reported here.
 */
import type { Summary } from "../../test/support/stats.ts";

export interface Row {
  area: string;
  measure: string;
  value: string;
  floor: string;
  ratio: string;
  target: string;
}

export interface Verdict {
  /** e.g. "≤ 5 ms", "≤ 1.1x" */
  label: string;
  met: boolean;
}

export const ms = (x: number): string =>
  Number.isFinite(x) ? `${Math.abs(x) < 10 ? x.toFixed(2) : x < 1000 ? x.toFixed(1) : x.toFixed(0)} ms` : "n/a";
export const percentiles = (s: Summary): string => `${ms(s.median)} / ${ms(s.p95)} / ${ms(s.p99)}`;
export const times = (a: number, b: number): string => (Number.isFinite(a / b) ? `${(a / b).toFixed(2)}x` : "n/a");
export const bytes = (n: number): string =>
  n < 1024 ? `${n} B` : n < 1024 ** 2 ? `${(n / 1024).toFixed(1)} KiB` : `${(n / 1024 ** 2).toFixed(1)} MiB`;
export const count = (n: number): string => n.toLocaleString("en");

/** "≤ limit unit" held against a value. */
export function atMost(value: number, limit: number, unit: string): Verdict {
  return { label: `≤ ${limit}${unit}`, met: Number.isFinite(value) && value <= limit };
}

export function atLeast(value: number, limit: number, unit: string): Verdict {
  return { label: `≥ ${limit}${unit}`, met: Number.isFinite(value) && value >= limit };
}

export class Table {
  readonly rows: Row[] = [];

  add(row: { area?: string; measure: string; value: string; floor?: string; ratio?: string; target?: Verdict }): void {
    this.rows.push({
      area: row.area ?? "",
      measure: row.measure,
      value: row.value,
      floor: row.floor ?? "",
      ratio: row.ratio ?? "",
      target: row.target ? `${row.target.label} ${row.target.met ? "met" : "NOT met"}` : "",
    });
  }

  /** Markdown, so the output pastes into BENCHMARKS.md as it is. */
  render(): string {
    const headers = ["area", "measure", "value (median / p95 / p99)", "floor", "ratio", "target"];
    const cells = [headers, ...this.rows.map((r) => [r.area, r.measure, r.value, r.floor, r.ratio, r.target])];
    const widths = headers.map((_, c) => Math.max(...cells.map((line) => (line[c] ?? "").length)));
    const line = (values: string[]) => `| ${values.map((v, i) => v.padEnd(widths[i] ?? 0)).join(" | ")} |`;
    return [line(headers), `|${widths.map((w) => "-".repeat(w + 2)).join("|")}|`, ...cells.slice(1).map(line)].join("\n");
  }
}
