/**
 * @module summary-command
 * `waymark summary`: the pull-request summary of a workflow, read from the endpoint with the
 * helper's token and rendered by the same renderer as the edge's Markdown export. The MCP proxy
 * remembers, per endpoint and project directory, the last workflow started there and its
 * share link, so `waymark summary` needs no argument in the usual case.
 */
import { createHash } from "node:crypto";
import { mkdir, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import type { CallToolResult } from "@modelcontextprotocol/server";
import { renderSummary, statementLine } from "@waymark/protocol/pr-summary";
import { type PublishedKeys, SIGNING_KEYS_PATH } from "@waymark/protocol/statement";
import type { WorkflowResource } from "@waymark/protocol/views/reads";
import { Remote } from "./remote.js";
import { treeKey } from "./tree-key.js";

type LastWorkflow = { workflow_id: string; share_url?: string };

/** Per endpoint, directory and the repository in it (./tree-key.ts): another repository at the same path has none. */
function lastWorkflowFile(cache: string, endpoint: string, dir: string): string {
  return join(
    cache,
    "workflows",
    `${createHash("sha256")
      .update(`${endpoint}\0${treeKey(dir)}`)
      .digest("hex")
      .slice(0, 24)}.json`,
  );
}

/** Keeps the id and share link of a workflow just started through the proxy. */
export async function recordWorkflow(cache: string, endpoint: string, dir: string, result: CallToolResult): Promise<void> {
  const out = result.structuredContent as { workflow_id?: unknown; share_url?: unknown } | undefined;
  if (typeof out?.workflow_id !== "string") return;
  const record: LastWorkflow = { workflow_id: out.workflow_id };
  if (typeof out.share_url === "string") record.share_url = out.share_url;
  const file = lastWorkflowFile(cache, endpoint, dir);
  await mkdir(join(cache, "workflows"), { recursive: true, mode: 0o700 });
  await writeFile(file, JSON.stringify(record), { mode: 0o600 });
}

export async function lastWorkflow(cache: string, endpoint: string, dir: string): Promise<LastWorkflow | null> {
  try {
    return JSON.parse(await readFile(lastWorkflowFile(cache, endpoint, dir), "utf8")) as LastWorkflow;
  } catch {
    return null;
  }
}

/** The arrays the workflow resource pages (`truncated` names the next page of each that has more). */
const PAGED_ARRAYS = ["tasks", "decisions", "issues"] as const;
type PagedArray = (typeof PAGED_ARRAYS)[number];

export type SummaryRequest = {
  url: string;
  token: string | undefined;
  workflowId: string;
  link?: string;
  version: string;
  timeoutMs: number;
};

/**
 * The line naming the key that signs the endpoint's exports, as the edge's Markdown export ends,
 * from the keys it publishes; nothing when it publishes none or cannot be read (the summary
 * never names a key it did not see).
 */
async function signingLine(request: SummaryRequest): Promise<string> {
  const origin = new URL(request.url).origin;
  try {
    const response = await fetch(`${origin}${SIGNING_KEYS_PATH}`, { signal: AbortSignal.timeout(request.timeoutMs), redirect: "error" });
    if (!response.ok) return "";
    const current = ((await response.json()) as PublishedKeys).keys?.find((key) => key.status === "current");
    return current && typeof current.kid === "string" ? statementLine({ kid: current.kid, origin }) : "";
  } catch {
    return "";
  }
}

/** The workflow as the endpoint serves it (`waymark://workflows/{id}`), as Markdown. */
export async function fetchSummary(request: SummaryRequest): Promise<string> {
  const remote = new Remote({ url: request.url, token: request.token, timeoutMs: request.timeoutMs, version: request.version });
  try {
    const read = await remote.request("resources/read", { uri: `waymark://workflows/${request.workflowId}` });
    const first = read.contents[0];
    if (!first || !("text" in first)) throw new Error(`the endpoint returned no workflow ${request.workflowId}`);
    const view = JSON.parse(first.text) as WorkflowResource;
    // A large workflow's resource holds each array's first page: the rest is read page by page.
    for (const kind of PAGED_ARRAYS) {
      for (let next = view.truncated?.[kind]?.next ?? null; next !== null; ) {
        const page = await remote.request("resources/read", { uri: next });
        const content = page.contents[0];
        if (!content || !("text" in content)) throw new Error(`the endpoint returned no page at ${next}`);
        const parsed = JSON.parse(content.text) as Pick<WorkflowResource, PagedArray> & { next: string | null };
        (view[kind] as unknown[]).push(...parsed[kind]);
        next = parsed.next;
      }
    }
    return renderSummary(view, request.link ? { link: request.link } : {}) + (await signingLine(request));
  } finally {
    await remote.close().catch(() => {});
  }
}
