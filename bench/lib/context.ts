/**
 * What every section of `npm run bench` shares: the size switch (--quick), the one table,
 * the JSON results, progress output on stderr, and a way to mark the run failed (errors and
 * inconsistencies fail it; slowness never does).
 */
import type { Table } from "./table.ts";

export interface BenchContext {
  quick: boolean;
  table: Table;
  /** Everything measured, by section, for bench/results/latest.json. */
  results: Record<string, unknown>;
  log(message: string): void;
  /** Records an error or an inconsistency: the run exits with code 1. */
  fail(problem: string): void;
}
