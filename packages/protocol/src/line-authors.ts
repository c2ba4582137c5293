/**
 * @module line-authors
 * Who wrote a task's added lines, in figures and in one wording for every rendering (the page,
 * the Markdown export, `waymark summary`, complete_task's result): by the agent's own edit tools,
 * by others (anything else the hooks saw change the file: the user, a formatter, a generator,
 * another agent, a command), or not observed (no hook saw the work: never counted as anyone's).
 */

import type { LineAuthors, TaskLineAuthors } from "./views/task";
import type { LineCount } from "./wire";
import { counted } from "./wording";

export type { LineAuthors, TaskLineAuthors } from "./views/task";

/** A file's authors, when the helper attributed its lines. */
export function authorsOf(line: LineCount): LineAuthors | null {
  if ("binary" in line || (line.agent === undefined && line.others === undefined && line.not_observed === undefined)) return null;
  return { agent: line.agent ?? 0, others: line.others ?? 0, not_observed: line.not_observed ?? 0 };
}

/** Sums over the files whose lines were attributed; null when none was. */
export function authorTotals(lines: readonly LineCount[]): LineAuthors | null {
  let totals: LineAuthors | null = null;
  for (const line of lines) {
    const authors = authorsOf(line);
    if (!authors) continue;
    totals ??= { agent: 0, others: 0, not_observed: 0 };
    totals.agent += authors.agent;
    totals.others += authors.others;
    totals.not_observed += authors.not_observed;
  }
  return totals;
}

/** The agent's share of the added lines, in whole percent; null without added lines. */
export function agentShare(authors: LineAuthors): number | null {
  const all = authors.agent + authors.others + authors.not_observed;
  return all === 0 ? null : Math.round((authors.agent / all) * 100);
}

/** "agent 9 · others 3 · not observed 2", each part only when it counts lines ("" when none does). */
export function formatLineAuthors(authors: LineAuthors): string {
  const parts: string[] = [];
  if (authors.agent > 0) parts.push(`agent ${authors.agent}`);
  if (authors.others > 0) parts.push(`others ${authors.others}`);
  if (authors.not_observed > 0) parts.push(`not observed ${authors.not_observed}`);
  return parts.join(" · ");
}

/** A task's authors as one sentence: the three ways a line can have come, each said only when it counts lines. */
export function lineAuthorsText(authors: TaskLineAuthors): string {
  const all = authors.agent + authors.others + authors.not_observed;
  if (all === 0) return "no lines added";
  const parts: string[] = [];
  const share = agentShare(authors);
  if (authors.agent > 0 || authors.others > 0) {
    parts.push(`${authors.agent} of ${counted(all, "added line")} last written by the agent's own edit tools (${share}%)`);
    if (authors.others > 0) parts.push(`${authors.others} by something else (a person, a formatter, a command, another agent)`);
  }
  if (authors.not_observed > 0)
    parts.push(
      `${authors.not_observed} not observed${authors.not_observed_reason ? ` (${authors.not_observed_reason})` : ""}: no one is credited with ${authors.not_observed === 1 ? "it" : "them"}`,
    );
  return parts.join("; ");
}
