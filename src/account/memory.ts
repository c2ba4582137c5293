/**
 * @module account/memory
 * Memory: the account's full-text index (SQLite FTS5, BM25 ranking) over its workflows'
 * tasks, decisions, issues and outcomes. Workflow objects push documents after each write;
 * a document is keyed by the id of the entity it describes, so a replayed push replaces
 * it instead of adding a twin.
 */

import type { MemoryDocument, MemoryKind } from "../domain/memory-documents";
import { LIMITS } from "../limits";
import type { Sql } from "../storage/sql";

export interface MemoryHit {
  kind: MemoryKind;
  id: string;
  workflow_id: string;
  task_id: string | null;
  text: string;
  at: string;
}

/** What start_task returns about earlier work: compact on purpose (it costs the agent context). */
export interface RelatedItem {
  kind: "decision" | "issue";
  task_id: string | null;
  workflow_id: string;
  text: string;
}

const clip = (value: string, max: number) => (value.length <= max ? value : `${value.slice(0, max - 1)}…`);

// ── Query text → FTS5 MATCH expression ─────────────────────────────────────

/**
 * User text as FTS5 terms: split on whitespace, every term double-quoted with its inner
 * quotes doubled, so nothing the user types (`step-3`, `NEAR`, `*`, `OR`, `col:x`, `"`) is
 * ever read as FTS syntax. A quoted term is a phrase of the tokenizer's tokens (`step-3` →
 * "step" then "3"); a term without a letter or digit has no tokens and is dropped.
 */
export function ftsTerms(text: string, max: number = LIMITS.SEARCH_TERMS): string[] {
  const seen = new Set<string>();
  const terms: string[] = [];
  for (const raw of text.split(/\s+/)) {
    if (!/[\p{L}\p{N}]/u.test(raw)) continue;
    const key = raw.toLowerCase();
    if (seen.has(key)) continue;
    seen.add(key);
    terms.push(`"${raw.replaceAll('"', '""')}"`);
    if (terms.length >= max) break;
  }
  return terms;
}

/** Every term must match (implicit AND); null when nothing searchable remains. */
export function matchAll(text: string): string | null {
  const terms = ftsTerms(text);
  return terms.length > 0 ? terms.join(" ") : null;
}

/** Any term may match, BM25 ranks documents matching more (and rarer) terms first. */
export function matchAny(text: string): string | null {
  const terms = ftsTerms(text);
  return terms.length > 0 ? terms.join(" OR ") : null;
}

// Words that carry no topic; left out of the related-work query so they do not pull in everything.
const STOPWORDS = new Set(
  "a an and are as at be by for from how in into is it of on or that the this to with without we our use using via new add make".split(" "),
);

/** The related-work terms of a new task (FTS5 phrases, as ftsTerms): its name, goal and areas, minus filler words. */
export function relatedTerms(parts: readonly string[]): string[] {
  const words = parts
    .join(" ")
    .split(/[\s/*,.;:()[\]{}]+/)
    .filter((w) => w.length > 1 && !STOPWORDS.has(w.toLowerCase()));
  return ftsTerms(words.join(" "));
}

/** The related-work query of a new task: any of its terms; null when nothing searchable remains. */
export function relatedQuery(parts: readonly string[]): string | null {
  const terms = relatedTerms(parts);
  return terms.length > 0 ? terms.join(" OR ") : null;
}

// ── The index (inside the AccountObject) ───────────────────────────────────

// BM25 column weights: what an entry is about counts most, where it happened least.
const TITLE_WEIGHT = 4;
const BODY_WEIGHT = 1;
const CONTEXT_WEIGHT = 0.25;

/** Documents cut below MEMORY_DOCUMENTS when the index passes it, so the exact count runs once per this many. */
const MEMORY_PRUNE_SLACK = 500;

/** A term's document count is counted again once this many documents were added since (it moves by at most that many). */
const RELATED_RECOUNT_AFTER = 500;

/** At most this many terms' counts are kept in memory (all forgotten at once past it: a recount is one read of a posting list). */
const RELATED_FREQUENCIES_KEPT = 4096;

/** The fill of related work picks from at most this many documents holding only common terms, newest first. */
const RELATED_FILL_CANDIDATES = 50;

/** A query's terms (matchAll, matchAny) searched in the documents' text columns only, never in their ids (`ref`). */
const inText = (match: string) => `{title body context} : (${match})`;

/**
 * The phrase that finds a document's entry by its entity id through the index (compared exactly
 * after): the id's last segment, its random part (`dc_<random>`, `tk_<workflow>_<random>`), whose
 * token is in about one document; the whole id's tokens would include its kind (`dc`, `tk`), in
 * every document of that kind, and matching that token's whole list cost 0.2 ms a document at
 * 10,000 documents (0.05 ms by the last segment).
 */
function refMatch(id: string): string {
  const last = id.slice(id.lastIndexOf("_") + 1);
  const phrase = /[\p{L}\p{N}]/u.test(last) ? last : id;
  return `ref : "${phrase.replaceAll('"', '""')}"`;
}

type StoredDoc = {
  rowid: number;
  title: string;
  body: string;
  context: string;
  kind: string;
  workflow_id: string;
  task_id: string | null;
  text: string;
  at: string;
};

type RelatedRow = { rowid: number; kind: string; workflow_id: string; task_id: string | null; text: string; score: number };

type HitRow = { entity_id: string; kind: string; workflow_id: string; task_id: string | null; text: string; at: string; score: number };

export class MemoryIndex {
  /** Documents per related-work term, and the newest rowid when counted (`frequency`). */
  private readonly frequencies = new Map<string, { documents: number; newest: number }>();

  constructor(private readonly sql: Sql) {}

  /**
   * Upserts by entity id: the document keeps its place (its FTS rowid), its FTS entry is replaced.
   * Everything a document is lives in its FTS entry (v19: its id in the indexed column `ref`, which
   * searches leave out, its result columns unindexed), so a new document is one row written and a
   * changed one one (updated in place); one pushed again unchanged (a replayed push) none. It is
   * found by its id through the index: `ref` matched as a phrase, then compared exactly.
   */
  upsert(documents: readonly MemoryDocument[]): void {
    let next: number | null = null;
    for (const doc of documents) {
      const title = clip(doc.title, LIMITS.MEMORY_TITLE);
      const body = clip(doc.body, LIMITS.MEMORY_BODY);
      const text = clip(doc.text, LIMITS.MEMORY_TITLE);
      const context = clip(doc.context, LIMITS.MEMORY_TITLE);
      const stored = this.sql<StoredDoc>`
        SELECT rowid, title, body, context, kind, workflow_id, task_id, text, at FROM memory_fts
        WHERE memory_fts MATCH ${refMatch(doc.id)} AND ref = ${doc.id}`[0];
      if (stored === undefined) {
        next ??= (this.sql<{ rowid: number }>`SELECT rowid FROM memory_fts ORDER BY rowid DESC LIMIT 1`[0]?.rowid ?? 0) + 1;
        this.sql`INSERT INTO memory_fts (rowid, title, body, context, ref, kind, workflow_id, task_id, text, at)
          VALUES (${next++}, ${title}, ${body}, ${context}, ${doc.id}, ${doc.kind}, ${doc.workflow_id}, ${doc.task_id}, ${text}, ${doc.at})`;
        continue;
      }
      const same =
        stored.title === title &&
        stored.body === body &&
        stored.context === context &&
        stored.kind === doc.kind &&
        stored.workflow_id === doc.workflow_id &&
        stored.task_id === doc.task_id &&
        stored.text === text &&
        stored.at === doc.at;
      if (same) continue;
      this.sql`UPDATE memory_fts SET title = ${title}, body = ${body}, context = ${context}, kind = ${doc.kind},
        workflow_id = ${doc.workflow_id}, task_id = ${doc.task_id}, text = ${text}, at = ${doc.at} WHERE rowid = ${stored.rowid}`;
    }
    this.prune();
  }

  /**
   * Keeps at most MEMORY_DOCUMENTS documents; the oldest go first. Counting every document on each
   * push would read the whole index: the FTS rowid span (two seeks) bounds the count from above,
   * so the exact count runs only once the span passes the limit, and then cuts MEMORY_PRUNE_SLACK
   * documents more, so the next count waits that many documents.
   */
  private prune(): void {
    const span =
      this.sql<{ span: number }>`SELECT coalesce((SELECT rowid FROM memory_fts ORDER BY rowid DESC LIMIT 1)
        - (SELECT rowid FROM memory_fts ORDER BY rowid LIMIT 1) + 1, 0) AS span`[0]?.span ?? 0;
    if (span <= LIMITS.MEMORY_DOCUMENTS) return;
    const count = this.sql<{ n: number }>`SELECT count(*) AS n FROM memory_fts`[0]?.n ?? 0;
    if (count <= LIMITS.MEMORY_DOCUMENTS) return;
    const excess = count - LIMITS.MEMORY_DOCUMENTS + MEMORY_PRUNE_SLACK;
    const cutoff = this.sql<{ rowid: number }>`SELECT rowid FROM memory_fts ORDER BY rowid LIMIT 1 OFFSET ${excess - 1}`[0]?.rowid;
    if (cutoff === undefined) return;
    this.sql`DELETE FROM memory_fts WHERE rowid <= ${cutoff}`;
  }

  /**
   * Explicit search: documents containing every term, best first; when none does, documents
   * containing any term (the result says which).
   */
  search(query: string, limit: number): { match: "all" | "any"; results: MemoryHit[] } {
    const bounded = Math.min(Math.max(Math.trunc(limit), 1), LIMITS.SEARCH_RESULTS);
    const all = matchAll(query);
    if (all === null) return { match: "all", results: [] };
    const results = this.rank(all, bounded);
    if (results.length > 0 || ftsTerms(query).length < 2) return { match: "all", results };
    return { match: "any", results: this.rank(matchAny(query) ?? all, bounded) };
  }

  private rank(match: string, limit: number): MemoryHit[] {
    const rows = this.sql<HitRow>`
      SELECT ref AS entity_id, kind, workflow_id, task_id, text, at, bm25(memory_fts, ${TITLE_WEIGHT}, ${BODY_WEIGHT}, ${CONTEXT_WEIGHT}, 0) AS score
      FROM memory_fts WHERE memory_fts MATCH ${inText(match)}
      ORDER BY score, rowid DESC LIMIT ${limit}`;
    return rows.map(hitOf);
  }

  /**
   * Earlier decisions and issues most relevant to a new task (BM25 over its name, goal and
   * areas), never the task's own, and ranked ahead when they come from another workflow:
   * the same workflow's recent logs are one get_workflow away already. Only the newest
   * RELATED_WINDOW documents are ranked (a rowid range passed to FTS5); get_workflow {query}
   * searches them all. FTS5 reports a row read for every document in the ranked terms' entries,
   * the range notwithstanding (docs/storage.md, "What a request reads").
   *
   * A term in at least half the documents (`task`, `src` in most accounts) weighs nothing in
   * BM25 (FTS5 clamps its IDF to 1e-6), yet ranking it scored every document of the window that
   * holds it and read its whole posting list: 15 ms a start_task at 50,000 documents, 0.45 ms
   * for rare words (BENCHMARKS.md). So only the other terms are ranked, as BM25 orders them; when
   * they find fewer than RELATED_ITEMS, documents holding only the common terms fill the rest,
   * other workflows' first, then newest first, from the newest RELATED_FILL_CANDIDATES of them.
   */
  related(input: { workflow_id: string; task_id: string; name: string; goal: string; areas: readonly string[] }): RelatedItem[] {
    const terms = relatedTerms([input.name, input.goal, ...input.areas]);
    if (terms.length === 0) return [];
    const ends = this.sql<{ newest: number | null; oldest: number | null }>`
      SELECT (SELECT rowid FROM memory_fts ORDER BY rowid DESC LIMIT 1) AS newest,
        (SELECT rowid FROM memory_fts ORDER BY rowid LIMIT 1) AS oldest`[0];
    if (ends?.newest == null || ends.oldest == null) return [];
    const newest = ends.newest;
    // The rowid span bounds the count from above, so a term counted common here is common to BM25 too.
    const span = newest - ends.oldest + 1;
    const common = terms.filter((term) => 2 * this.frequency(term, newest) >= span);
    const rarer = terms.filter((term) => !common.includes(term));
    const ranked = rarer.length > 0 ? this.rankRelated(rarer, input, newest) : [];
    if (ranked.length >= LIMITS.RELATED_ITEMS || common.length === 0) return ranked.map(relatedOf);
    return [...ranked, ...this.fillRelated(common, input, newest, ranked)].map(relatedOf);
  }

  /**
   * How many documents hold `term`, counted over the whole index (what BM25's IDF counts) and kept
   * in memory until RELATED_RECOUNT_AFTER documents have been added since: a count reads the
   * term's posting list, which is the cost it saves.
   */
  private frequency(term: string, newest: number): number {
    const key = term.toLowerCase();
    const kept = this.frequencies.get(key);
    if (kept && newest - kept.newest < RELATED_RECOUNT_AFTER && newest >= kept.newest) return kept.documents;
    const documents = this.sql<{ n: number }>`SELECT count(*) AS n FROM memory_fts WHERE memory_fts MATCH ${inText(term)}`[0]?.n ?? 0;
    if (this.frequencies.size >= RELATED_FREQUENCIES_KEPT) this.frequencies.clear();
    this.frequencies.set(key, { documents, newest });
    return documents;
  }

  private rankRelated(terms: readonly string[], input: { workflow_id: string; task_id: string }, newest: number): RelatedRow[] {
    return this.sql<RelatedRow>`
      SELECT rowid, kind, workflow_id, task_id, text, bm25(memory_fts, ${TITLE_WEIGHT}, ${BODY_WEIGHT}, ${CONTEXT_WEIGHT}, 0) AS score
      FROM memory_fts WHERE memory_fts MATCH ${inText(terms.join(" OR "))} AND rowid > ${newest - LIMITS.RELATED_WINDOW}
        AND kind IN ('decision', 'issue') AND coalesce(task_id, '') != ${input.task_id}
      ORDER BY score * (CASE WHEN workflow_id = ${input.workflow_id} THEN 0.5 ELSE 1.0 END), rowid DESC
      LIMIT ${LIMITS.RELATED_ITEMS}`;
  }

  /** The places the ranked terms left: documents holding only common terms, read newest first (FTS5's own order) and bounded. */
  private fillRelated(
    common: readonly string[],
    input: { workflow_id: string; task_id: string },
    newest: number,
    ranked: readonly RelatedRow[],
  ): RelatedRow[] {
    const taken = JSON.stringify(ranked.map((r) => r.rowid));
    return this.sql<RelatedRow>`
      SELECT rowid, kind, workflow_id, task_id, text, 0 AS score FROM (
        SELECT rowid, kind, workflow_id, task_id, text FROM memory_fts
        WHERE memory_fts MATCH ${inText(common.join(" OR "))} AND rowid > ${newest - LIMITS.RELATED_WINDOW}
          AND kind IN ('decision', 'issue') AND coalesce(task_id, '') != ${input.task_id}
          AND rowid NOT IN (SELECT value FROM json_each(${taken}))
        ORDER BY rowid DESC LIMIT ${RELATED_FILL_CANDIDATES})
      ORDER BY workflow_id = ${input.workflow_id}, rowid DESC
      LIMIT ${LIMITS.RELATED_ITEMS - ranked.length}`;
  }
}

function relatedOf(r: RelatedRow): RelatedItem {
  return { kind: r.kind as RelatedItem["kind"], task_id: r.task_id, workflow_id: r.workflow_id, text: clip(r.text, LIMITS.RELATED_TEXT) };
}

function hitOf(r: HitRow): MemoryHit {
  return { kind: r.kind as MemoryKind, id: r.entity_id, workflow_id: r.workflow_id, task_id: r.task_id, text: r.text, at: r.at };
}
