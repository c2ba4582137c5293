/**
 * The merge-survival matrix: a pull request recorded by the real helper through this build's
 * `wrangler dev` (test/support/merge-scenario.ts: two tasks whose edits the hooks saw, a person's
 * edit during one, a person's commit of N edits between them), merged every way a platform or a
 * developer merges (merge commit, squash, rebase merge, cherry-pick, amend, rebase -i with a
 * person's edit), then the one CI step after the merge (`waymark notes carry`), and `waymark blame`
 * on main in a fresh clone that has nothing but main and the notes. Each line's text says who
 * wrote it, so the truth does not depend on git: of the agent's lines whose content the merge kept,
 * the share blame on main still gives to their task and model (target 100%), and the lines it
 * gives to anyone they are not (target 0). One pull request per size, copied for each way of merging.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { DevServer } from "../../test/support/dev-server.ts";
import {
  afterMerge,
  cleanupScenarios,
  compare,
  copyPullRequest,
  MERGE_KINDS,
  type MergeKind,
  merge,
  platformClone,
  pullRequest,
} from "../../test/support/merge-scenario.ts";
import { summarize } from "../../test/support/stats.ts";
import type { BenchContext } from "../lib/context.ts";
import { atLeast, atMost, count, ms } from "../lib/table.ts";

type Cell = {
  kind: MergeKind;
  files: number;
  edits: number;
  agent: number;
  kept: number;
  attributed: number;
  wrong: number;
  carryMs: number;
};

export async function mergeMatrix(context: BenchContext, server: DevServer): Promise<void> {
  const sizes = context.quick ? { files: [2], edits: [0, 2] } : { files: [1, 3, 6], edits: [0, 1, 3] };
  const cacheHome = mkdtempSync(join(tmpdir(), "waymark-bench-merges-"));
  const env = { XDG_CACHE_HOME: cacheHome };
  const cells: Cell[] = [];
  try {
    for (const files of sizes.files) {
      for (const edits of sizes.edits) {
        context.log(
          `merges: a pull request of ${files} file(s), ${edits} person edit(s) between the tasks, merged ${MERGE_KINDS.length} ways`,
        );
        const pr = await pullRequest(server, { files, personEdits: edits, cacheHome });
        const onBranch = compare(pr.dev.dir, pr, pr.head, env);
        const branchWrong = onBranch.filter((l) => JSON.stringify(l.got) !== JSON.stringify(l.want));
        if (branchWrong.length > 0)
          context.fail(`merges: on the branch itself, ${branchWrong.length} line(s) attributed wrongly: ${JSON.stringify(branchWrong[0])}`);
        const agentTexts = new Set(onBranch.filter((l) => l.want.who === "agent").map((l) => l.text));
        for (const kind of MERGE_KINDS) {
          const copy = copyPullRequest(pr);
          const merged = merge(copy, kind);
          const started = performance.now();
          afterMerge(copy.origin, merged, env);
          const carryMs = performance.now() - started;
          const onMain = compare(platformClone(copy.origin), copy, "origin/main", env);
          const kept = onMain.filter((l) => agentTexts.has(l.text));
          const wrong = onMain.filter(
            (l) =>
              (l.got.who === "agent" || l.got.who === "others" || l.want.who !== "not_recorded") &&
              JSON.stringify(l.got) !== JSON.stringify(l.want),
          );
          cells.push({
            kind,
            files,
            edits,
            agent: agentTexts.size,
            kept: kept.length,
            attributed: kept.filter((l) => JSON.stringify(l.got) === JSON.stringify(l.want)).length,
            wrong: wrong.length,
            carryMs,
          });
          if (wrong.length > 0)
            context.fail(
              `merges: ${kind}, ${files} file(s), ${edits} edit(s): ${wrong.length} line(s) attributed wrongly, first ${JSON.stringify(wrong[0])}`,
            );
        }
      }
    }
  } finally {
    rmSync(cacheHome, { recursive: true, force: true });
    cleanupScenarios();
  }
  const sizesText = `files ${sizes.files.join("/")} × person edits ${sizes.edits.join("/")}${context.quick ? " (--quick size)" : ""}`;
  for (const [i, kind] of MERGE_KINDS.entries()) {
    const mine = cells.filter((cell) => cell.kind === kind);
    const kept = mine.reduce((sum, cell) => sum + cell.kept, 0);
    const attributed = mine.reduce((sum, cell) => sum + cell.attributed, 0);
    const wrong = mine.reduce((sum, cell) => sum + cell.wrong, 0);
    const share = kept === 0 ? Number.NaN : (100 * attributed) / kept;
    const carry = summarize(mine.map((cell) => cell.carryMs));
    context.table.add({
      area: i === 0 ? `merge survival (${sizesText})` : "",
      measure: `${kind}: agent lines kept by the merge still the agent's on main (task, model), then lines attributed wrongly; the CI step (clone, carry, push) ${ms(carry.median)} median`,
      value: `${Number.isFinite(share) ? share.toFixed(1) : "n/a"}% of ${count(kept)} · ${count(wrong)} wrong`,
      target: wrong > 0 ? atMost(wrong, 0, " wrong") : atLeast(share, 100, "%"),
    });
  }
  context.results.merges = { sizes, cells };
}
