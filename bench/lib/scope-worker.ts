/**
 * A worker thread that times src/domain's scope check on one (area, path) pair, so a
 * backtracking matcher can be stopped from outside (the bench terminates this thread at its
 * deadline). Posts `{ perMatchMs, matches }` or `{ error }`.
 */
import { parentPort, workerData } from "node:worker_threads";
import type { Domain } from "./domain.ts";

const { moduleUrl, area, path, budgetMs } = workerData as { moduleUrl: string; area: string; path: string; budgetMs: number };
try {
  const domain = (await import(moduleUrl)) as Domain;
  let matches = 0;
  const started = performance.now();
  // Repeat while under budget so fast matchers get a stable figure; a slow one runs once.
  do {
    domain.checkScope([area], [path]);
    matches++;
  } while (performance.now() - started < budgetMs && matches < 100_000);
  parentPort?.postMessage({ perMatchMs: (performance.now() - started) / matches, matches });
} catch (error) {
  parentPort?.postMessage({ error: error instanceof Error ? error.message : String(error) });
}
