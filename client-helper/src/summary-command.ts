/**
 * @module summary-command
 * `waymark summary`: the pull-request summary of a workflow, which is the endpoint's Markdown
 * export itself (the same renderer, the same review items and counts, the reviewers' feedback, the
 * line on how to check the signed JSON export), read with the helper's token, with a link to the
 * workflow's page under its heading: the share link as it is now (a link rotated or revoked since
 * the workflow started is never printed), or the one given. The MCP proxy remembers, per endpoint
 * and project directory, the last workflow started there, so `waymark summary` needs no argument
 * in the usual case.
 */
import { createHash } from "node:crypto";
import { mkdir, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import type { CallToolResult } from "@modelcontextprotocol/server";
import { withPageLink } from "@waymark/protocol/pr-summary";
import { currentShareLink, fetchExport } from "./export-fetch.js";
import { treeKey } from "./tree-key.js";

type LastWorkflow = { workflow_id: string };

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

/** Keeps the id of a workflow just started through the proxy (its share link is asked for when a summary needs it: it may change). */
export async function recordWorkflow(cache: string, endpoint: string, dir: string, result: CallToolResult): Promise<void> {
  const out = result.structuredContent as { workflow_id?: unknown } | undefined;
  if (typeof out?.workflow_id !== "string") return;
  const record: LastWorkflow = { workflow_id: out.workflow_id };
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

export type SummaryRequest = {
  origin: string;
  token: string | undefined;
  workflowId: string;
  /** The page link: a URL, "current" (the share link as it is now, if active), or null for none. */
  link: string | "current" | null;
  /** Says why a summary has no page link although one was asked for. */
  note: (text: string) => void;
};

/** The page link to print: the one given, the active share link, or none (saying why). */
async function pageLink(request: SummaryRequest): Promise<string | null> {
  if (request.link !== "current") return request.link;
  try {
    const share = await currentShareLink(request.origin, request.workflowId, request.token);
    if (share.url !== null) return share.url;
    request.note(
      `no page link: the workflow's share link is ${share.status === "none" ? "not created" : share.status} (create one on its page, or pass --link)`,
    );
  } catch (error) {
    request.note(`no page link: ${error instanceof Error ? error.message : String(error)}`);
  }
  return null;
}

/** The workflow's Markdown export, with its page link when there is one. */
export async function fetchSummary(request: SummaryRequest): Promise<string> {
  const [markdown, link] = await Promise.all([
    fetchExport(request.origin, request.workflowId, request.token, "export.md"),
    pageLink(request),
  ]);
  return link === null ? markdown : withPageLink(markdown, link);
}
