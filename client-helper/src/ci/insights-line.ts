/**
 * @module ci/insights-line
 * `waymark ci`'s per-repository line (docs/insights.md): the repository's Insights over the last
 * INSIGHT_DAYS days, read from the endpoint (`GET /api/insights` with the job's read token, the
 * repository named by the fingerprint the helper computes for the clone), as one line for the
 * repository and one per agent and model: what they claimed next to what was observed, each figure
 * with the tasks it rests on and its sources, withheld below the endpoint's minimum. What cannot be
 * read is said in one line; it never fails the job.
 */
import { groupLine } from "@waymark/protocol/insights-wording";
import { escapeMarkdown } from "@waymark/protocol/pr-summary";
import type { Insights } from "@waymark/protocol/views/insights";
import { printable } from "../terminal.js";
import { getJson, Unreachable } from "./pr-record.js";

/** The period the line covers, ending today. */
export const INSIGHT_DAYS = 30;
/** Groups listed under the repository's line (the most tasks first). */
const GROUPS_LISTED = 6;

export type RepositoryInsights = { insights: Insights; page: string } | { unavailable: string };

/** The repository's Insights, or why they could not be read. */
export async function repositoryInsights(origin: string, token: string | undefined, fingerprint: string): Promise<RepositoryInsights> {
  const url = `${origin}/api/insights?days=${INSIGHT_DAYS}&by=agent,model&repository=${fingerprint}`;
  try {
    const body = (await getJson(url, token)) as Partial<Insights> & { refused?: string };
    if (body.refused) return { unavailable: body.refused };
    if (!body.total || !Array.isArray(body.groups)) return { unavailable: "/api/insights did not answer its figures" };
    return { insights: body as Insights, page: `${origin}/dashboard/insights?days=${INSIGHT_DAYS}&repository=${fingerprint}` };
  } catch (error) {
    if (error instanceof Unreachable) return { unavailable: error.message };
    throw error;
  }
}

/** The summary's section: the repository's line, then one per agent and model. */
export function insightsMarkdown(found: RepositoryInsights): string {
  const heading = `### This repository, last ${INSIGHT_DAYS} days (Waymark Insights)\n\n`;
  if ("unavailable" in found) return `${heading}Not read: ${escapeMarkdown(found.unavailable)}\n`;
  const { insights } = found;
  if (insights.total.tasks === 0)
    return `${heading}No task completed in this repository from ${insights.period.from} to ${insights.period.to}.\n`;
  const lines = insights.groups.slice(0, GROUPS_LISTED).map((group) => `- ${groupLine(group, escapeMarkdown)}`);
  const more = insights.groups.length - GROUPS_LISTED;
  return `${heading}${groupLine({ ...insights.total, label: "All agents" })}\n\n${lines.join("\n")}\n${
    more > 0 ? `- and ${more} more group(s)\n` : ""
  }\nNo figure is shown from fewer than ${insights.minimum_tasks} tasks; each says the tasks it rests on and where its evidence came from (observed by Waymark, computed and signed by an approved device, claimed, not observed). The comparisons: [the Insights page](${found.page}).\n`;
}

/** The log's line. */
export function insightsText(found: RepositoryInsights): string {
  if ("unavailable" in found) return `insights: not read (${printable(found.unavailable)})\n`;
  return `insights, last ${INSIGHT_DAYS} days: ${printable(groupLine({ ...found.insights.total, label: "this repository" }))}\n`;
}
