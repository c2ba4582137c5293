/**
 * @module pages/page-reads
 * What one request of a workflow page reads and renders, bounded whatever the workflow's size:
 * one page of the timeline (LIMITS.PAGE_TASKS tasks, and the object's byte bound), each task
 * with its first LIMITS.PAGE_FILES files (the object leaves the rest out before they cross the
 * RPC; the task's files page lists them). The rendered blocks are kept per isolate for the same
 * state (the head, which names the last event, and the page asked for), so many readers of one
 * link, and the live blocks every open page fetches after an event, cost one render per change.
 */

import { sha256Hex } from "../crypto";
import type { Reader, WorkflowHead } from "../domain/view";
import { LIMITS } from "../limits";
import type { WorkflowObject } from "../workflow/workflow-object";
import { revealBidiControls } from "./format";
import { type BlockOptions, type RenderedBlocks, workflowBlocks } from "./page";
import { timelinePage } from "./paged-reads";

type Stub = DurableObjectStub<WorkflowObject>;

/** Rendered blocks by state, least recently used first; bounded in entries and in bytes. */
const rendered = new Map<string, RenderedBlocks>();
let renderedBytes = 0;

function remember(key: string, blocks: RenderedBlocks): void {
  if (blocks.markup.length > LIMITS.PAGE_CACHE_BYTES / 4) return;
  rendered.set(key, blocks);
  renderedBytes += blocks.markup.length;
  for (const [oldest, old] of rendered) {
    if (rendered.size <= LIMITS.PAGE_CACHE_ENTRIES && renderedBytes <= LIMITS.PAGE_CACHE_BYTES) break;
    rendered.delete(oldest);
    renderedBytes -= old.markup.length;
  }
}

function recall(key: string): RenderedBlocks | undefined {
  const hit = rendered.get(key);
  if (hit) {
    // Most recently used last.
    rendered.delete(key);
    rendered.set(key, hit);
  }
  return hit;
}

/**
 * The blocks of one timeline page for this head (the reader's own: the object checked the
 * reader when it gave the head, and checks it again if the page has to be read), rendered or
 * recalled. Agent text's bidi controls are shown as code points. Throws PagedReadError when the
 * page cannot be read (a cursor that is not one, a link revoked meanwhile).
 */
export async function pageBlocks(stub: Stub, reader: Reader, head: WorkflowHead, options: BlockOptions): Promise<RenderedBlocks> {
  const key = await sha256Hex(
    JSON.stringify([options.base, options.after, options.reviewBase ?? null, options.selected ?? null, options.signingKey ?? null, head]),
  );
  const known = recall(key);
  if (known) return known;
  const page = await timelinePage(stub, reader, { cursor: options.after, pageSize: LIMITS.PAGE_TASKS, filesPerTask: LIMITS.PAGE_FILES });
  const blocks = workflowBlocks(head, page, options);
  const shown = { markup: revealBidiControls(blocks.markup), facts: blocks.facts };
  remember(key, shown);
  return shown;
}
