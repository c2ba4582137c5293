/**
 * @module task-review
 * The review measurements (./review-measures.ts) wired into a task's life in the MCP proxy: start
 * contents kept at start_task, the review block attached at complete_task, the copies removed
 * once the task is recorded. A failure here never fails the task: it is logged and the task is
 * recorded without line counts.
 */
import { randomUUID } from "node:crypto";
import { rmSync } from "node:fs";
import { join } from "node:path";
import { computeNetChanges } from "@waymark/protocol/attribution";
import type { Changes, ReviewData } from "@waymark/protocol/wire";
import { WIRE_LIMITS } from "@waymark/protocol/wire-constants";
import { inertContext } from "./git/inert-config.js";
import type { GitContext } from "./git/process.js";
import { type AttributedFile, attributeLines, type LineInputs } from "./lines/attribute.js";
import type { LocalSnapshot } from "./local.js";
import {
  type CountsNeeded,
  type Leftovers,
  measureReview,
  pruneStartContents,
  saveStartContents,
  startContentsRoot,
} from "./review-measures.js";
import type { ScratchRepository } from "./scratch.js";
import { blobsStoredAt, observedBranch, observedContents, takeSnapshotContents, wireSnapshot } from "./snapshot.js";

/** `context`: the inert git context the tool call already read, if any (its config is not read again). */
export async function keepStartContents(
  local: LocalSnapshot,
  cache: string,
  log: (line: string) => void,
  context?: Promise<GitContext>,
): Promise<void> {
  if (local.type !== "git") return;
  const root = startContentsRoot(cache);
  const target = join(root, randomUUID());
  try {
    pruneOnce(root);
    await saveStartContents(await inRoot(local.root, context), local, target, takeSnapshotContents(local), blobsStoredAt(local));
    local.start_contents = target;
  } catch (error) {
    log(`waymark: could not keep the start contents of dirty files (line counts of those files will be missing): ${String(error)}`);
  }
}

/** Adds the review block to what complete_task sends (git observations only). */
/**
 * `cache`: the helper's cache directory, where the two sides of the line counts are written
 * (a new folder in a crowded /tmp made creating them there dozens of times slower).
 * `leftovers`: receives the removal of those scratch files, for the caller to start after its answer.
 * `scratch`: the scratch repository the caller opened ahead for the counts (and removes), if any.
 * `needed`: filled with the git processes the counts needed.
 * `lines`: the hooks' records of the task, when its line attribution is wanted (./lines/attribute.ts).
 */
export async function attachReview(
  start: LocalSnapshot,
  observed: Changes,
  sent: Changes,
  log: (line: string) => void,
  cache: string,
  context?: Promise<GitContext>,
  leftovers?: Leftovers,
  scratch?: ScratchRepository,
  needed?: CountsNeeded,
  lines?: Promise<LineInputs>,
): Promise<void> {
  if (start.type !== "git" || observed.type !== "git" || sent.type === "unavailable") return;
  try {
    let net = computeNetChanges(wireSnapshot(start), observed);
    if (sent.type === "net") {
      const listed = new Set(sent.transitions.map((t) => t.path));
      net = net.filter((change) => listed.has(change.path));
    }
    const scratchRoot = join(cache, "line-counts");
    pruneOnce(scratchRoot);
    const sides = lines ? new Map<string, { before: Buffer | null; after: Buffer | null }>() : undefined;
    const review = await measureReview(await inRoot(start.root, context), start, observed.head, net, start.start_contents, {
      scratchRoot,
      leftovers,
      endBranch: observedBranch(observed),
      scratch,
      contents: observedContents(observed),
      needed,
      sides,
    });
    sent.review = review;
    if (lines && sides) await attachLineAttribution(review, sides, await lines, log);
    const omitted = review.line_attribution?.files_omitted;
    const warnings = sent.warnings ?? [];
    if (omitted && warnings.length < WIRE_LIMITS.WARNINGS) {
      sent.warnings = [
        ...warnings,
        `which lines were whose is sent for the first files only: ${omitted} more file(s) keep their counts but not their line ranges (over the ${WIRE_LIMITS.LINE_ATTRIBUTION_BYTES / 1024} KiB the helper sends)`,
      ];
    }
  } catch (error) {
    log(`waymark: could not count lines or list commits: ${String(error)}`);
  }
}

/** Who wrote the added lines of each text file counted (a failure leaves the counts without it). */
async function attachLineAttribution(
  review: ReviewData,
  sides: ReadonlyMap<string, { before: Buffer | null; after: Buffer | null }>,
  inputs: LineInputs,
  log: (line: string) => void,
): Promise<void> {
  const files: AttributedFile[] = [];
  for (const count of review.lines) {
    const known = sides.get(count.path);
    if (known && !("binary" in count)) files.push({ path: count.path, ...known, count });
  }
  try {
    review.line_attribution = await attributeLines(files, inputs);
  } catch (error) {
    for (const { count } of files) {
      delete count.agent;
      delete count.others;
      delete count.not_observed;
    }
    log(`waymark: could not attribute lines: ${String(error)}`);
  }
}

const pruned = new Set<string>();

/**
 * Removes month-old leftovers under `root` once per process, beside the call rather than on its
 * way (it only touches folders older than anything this process writes).
 */
function pruneOnce(root: string): void {
  if (pruned.has(root)) return;
  pruned.add(root);
  pruneStartContents(root).catch(() => {});
}

/** The given context (or a fresh one) with git run from the repository's top level. */
async function inRoot(root: string, context: Promise<GitContext> | undefined): Promise<GitContext> {
  return { ...(await (context ?? inertContext(root))), cwd: root };
}

export function startContentsOf(start: LocalSnapshot): { remove(): Promise<void> } | undefined {
  if (start.type !== "git" || start.start_contents === undefined) return undefined;
  const dir = start.start_contents;
  // Synchronously: a folder of two files, where a recursive removal through the thread pool is a job per file and folder.
  return {
    remove: async () => {
      try {
        rmSync(dir, { recursive: true, force: true });
      } catch {
        // Left for the age-based removal.
      }
    },
  };
}
