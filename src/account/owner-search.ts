/**
 * @module account/owner-search
 * The owner view's search over the account's workflows (the dashboard and `GET /api/workflows`):
 * text narrows to the workflows the memory index finds, a path to the workflows whose tasks
 * changed it, and status and needs-review filter the rest in SQL; newest activity first, one
 * page of LIMITS.DASHBOARD_PAGE rows at a time, each row saying why it matched.
 *
 * The rules that combine searches and cut pages are pure functions, table-tested.
 */
import type { DashboardMatch, DashboardPage } from "@waymark/protocol/views/reads";
import type { WorkflowSummary } from "../domain/view";
import { LIMITS } from "../limits";
import type { MemoryHit, MemoryIndex } from "./memory";
import type { PathHit, PathIndex } from "./path-index";
import type { WorkflowIndex } from "./workflow-index";

/** The dashboard's filters; every one optional. */
export interface DashboardQuery {
  /** Words, searched in the account's memory (names, goals, outcomes, decisions, issues). */
  text?: string;
  /** A file path: exact, or every path starting with it when `prefix`. */
  path?: string;
  prefix?: boolean;
  status?: WorkflowSummary["status"];
  needs_review?: boolean;
  /** 0-based page of LIMITS.DASHBOARD_PAGE rows, newest activity first. */
  page?: number;
}

export type { DashboardMatch, DashboardPage } from "@waymark/protocol/views/reads";

/** What one search found, by workflow id. */
export type Found = Map<string, DashboardMatch>;

/** A row shows at most this many of the paths that made its workflow match. */
export const PATHS_SHOWN_PER_ROW = 5;

/** Per workflow, its best memory hit (hits arrive best first). */
export function textMatches(hits: readonly MemoryHit[]): Found {
  const found: Found = new Map();
  for (const hit of hits) if (!found.has(hit.workflow_id)) found.set(hit.workflow_id, { text: hit.text });
  return found;
}

/** Per workflow, the first PATHS_SHOWN_PER_ROW paths that matched (hits arrive newest first). */
export function pathMatches(hits: readonly PathHit[]): Found {
  const found: Found = new Map();
  for (const hit of hits) {
    const paths = found.get(hit.workflow_id)?.paths ?? [];
    if (paths.length < PATHS_SHOWN_PER_ROW)
      paths.push({ path: hit.path, task_id: hit.task_id, task_name: hit.task_name, status: hit.status });
    found.set(hit.workflow_id, { paths });
  }
  return found;
}

/**
 * The workflows every search found (null when no search ran: no narrowing), and for each the
 * reasons from all searches merged.
 */
export function combineSearches(searches: readonly Found[]): { ids: string[] | null; matches: Found } {
  let ids: string[] | null = null;
  const matches: Found = new Map();
  for (const found of searches) {
    ids = ids === null ? [...found.keys()] : ids.filter((id) => found.has(id));
    for (const [id, match] of found) matches.set(id, { ...matches.get(id), ...match });
  }
  return { ids, matches };
}

/** The page actually shown for a requested one: clamped into [0, pages - 1]; there is always one page. */
export function pageWindow(total: number, requested: number | undefined, size: number): { page: number; pages: number; offset: number } {
  const pages = Math.max(1, Math.ceil(total / size));
  const page = Math.min(Math.max(Math.trunc(requested ?? 0), 0), pages - 1);
  return { page, pages, offset: page * size };
}

export class OwnerSearch {
  constructor(
    private readonly memory: MemoryIndex,
    private readonly paths: PathIndex,
    private readonly workflows: WorkflowIndex,
  ) {}

  /** One page of the workflows that match every filter given. */
  page(query: DashboardQuery): DashboardPage {
    const searches: Found[] = [];
    if (query.text?.trim()) searches.push(textMatches(this.memory.search(query.text, LIMITS.SEARCH_RESULTS).results));
    const byPath = query.path ? this.paths.search(query.path, query.prefix === true, LIMITS.PATHS_PER_WORKFLOW) : null;
    if (byPath) searches.push(pathMatches(byPath.hits));
    const { ids, matches } = combineSearches(searches);
    const filter = { status: query.status ?? null, needsReview: query.needs_review === true, ids };
    const total = this.workflows.count(filter);
    const { page, pages, offset } = pageWindow(total, query.page, LIMITS.DASHBOARD_PAGE);
    const rows = this.workflows.page(filter, offset, LIMITS.DASHBOARD_PAGE).map((row) => {
      const match = matches.get(row.id);
      return match ? { ...row, match } : row;
    });
    return byPath ? { rows, total, page, pages, paths_searched_all: byPath.searched_all } : { rows, total, page, pages };
  }
}
