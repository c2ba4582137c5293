/**
 * @module account/insights
 * The account's Insights rollups (docs/insights.md), maintained as tasks complete: the workflow
 * objects push each completed top-level task's facts, people's verdicts and later observations of
 * its lines (domain/insight-facts, through the account outbox, off the tool's reply path), and
 * each task's contribution (domain/insight-measures) is kept in its row and added to one vector of
 * sums per day and month (domain/insight-buckets) and agent × model × repository group. Anything that changes a task's contribution
 * (a verdict, an observation, a replayed push) takes the old one out of its bucket and puts the new
 * one in, so replays change nothing and no read ever looks at the tasks: a period's figures are
 * the sums of the fewest stored buckets that tile it (about 44 rows per group for two years),
 * whatever the number of tasks.
 */

import { type BucketRange, bucketStart, dayNumber, dayOf, STORED_KINDS, type StoredKind } from "../domain/insight-buckets";
import type { InsightDurabilityFact, InsightFacts, InsightTaskFact, InsightVerdictFact } from "../domain/insight-facts";
import {
  addSums,
  contribution,
  type DurabilityState,
  MEASURES,
  MEASURES_VERSION,
  type Sums,
  type VerdictState,
  zeroSums,
} from "../domain/insight-measures";
import { type InsightRow, OTHER_GROUP } from "../domain/insight-view";
import { LIMITS } from "../limits";
import type { Sql } from "../storage/sql";

/** What the account's groups name, for the Insights page's filters. */
export interface InsightChoices {
  agents: string[];
  models: string[];
  repositories: { fingerprint: string; remote: string | null }[];
}

/** Which rows a read takes: the buckets (domain/insight-buckets readPlan) and, per dimension, one value or any. */
export interface RollupFilter {
  ranges: readonly BucketRange[];
  agent: string | null;
  model: string | null;
  repository: string | null;
}

type TaskRow = {
  task_id: string;
  day: string;
  agent: string;
  model: string;
  repository: string;
  completed_at: number;
  fact: string;
  contribution: string;
};

/** A task's place in the rollups: its completion day and its group. */
type Key = { day: string; agent: string; model: string; repository: string };

const DAY_MS = 86_400_000;
const parseSums = (text: string): Sums => {
  const values = JSON.parse(text) as number[];
  return MEASURES.map((_, i) => values[i] ?? 0);
};
/** Text and times as the index keeps them: bounded names (they are the client's words). */
const name = (value: string | null) => (value ?? "").slice(0, LIMITS.INSIGHT_NAME_CHARS);

export class InsightRollups {
  constructor(private readonly sql: Sql) {}

  /** A layout of the sums other than the stored one (a new measure): every bucket is rebuilt from the task rows. Run when the object starts. */
  open(): void {
    const stored = this.sql<{ measures_version: number }>`SELECT measures_version FROM insight_state WHERE id = 1`[0]?.measures_version;
    if (stored === MEASURES_VERSION) return;
    if (stored !== undefined) this.rebuild();
    this.sql`INSERT INTO insight_state (id, measures_version) VALUES (1, ${MEASURES_VERSION})
      ON CONFLICT (id) DO UPDATE SET measures_version = excluded.measures_version`;
  }

  /** A push's facts, applied in the caller's transaction: tasks first, so verdicts and observations find them. */
  apply(facts: InsightFacts): void {
    for (const fact of facts.tasks ?? []) this.recordTask(fact);
    for (const verdict of facts.verdicts ?? []) this.recordVerdict(verdict);
    for (const seen of facts.durability ?? []) this.recordDurability(seen);
  }

  /** The stored buckets of the ranges that pass the filter: one range scan of the primary key each. */
  rows(filter: RollupFilter): InsightRow[] {
    return filter.ranges.flatMap((range) =>
      this.sql<Omit<InsightRow, "sums"> & { sums: string }>`SELECT start, agent, model, repository, sums FROM insight_buckets
        WHERE kind = ${range.kind} AND start >= ${range.from} AND start <= ${range.to}
          AND (${filter.agent} IS NULL OR agent = ${filter.agent}) AND (${filter.model} IS NULL OR model = ${filter.model})
          AND (${filter.repository} IS NULL OR repository = ${filter.repository})`.map((row) => ({ ...row, sums: parseSums(row.sums) })),
    );
  }

  /** What the account's groups name: agents, models, repositories with their remotes (for the page's filters). */
  choices(): InsightChoices {
    const distinct = (rows: { value: string }[]) => rows.map((row) => row.value).filter((value) => value !== "" && value !== OTHER_GROUP);
    return {
      agents: distinct(this.sql<{ value: string }>`SELECT DISTINCT agent AS value FROM insight_groups ORDER BY agent`),
      models: distinct(this.sql<{ value: string }>`SELECT DISTINCT model AS value FROM insight_groups ORDER BY model`),
      repositories: this.sql<{ fingerprint: string; remote: string | null }>`SELECT r.fingerprint, r.remote FROM insight_repositories r
        WHERE r.fingerprint IN (SELECT repository FROM insight_groups) ORDER BY coalesce(r.remote, r.fingerprint)`,
    };
  }

  /** The remotes last reported for these repositories. */
  remotes(fingerprints: readonly string[]): Map<string, string | null> {
    if (fingerprints.length === 0) return new Map();
    const rows = this.sql<{ fingerprint: string; remote: string | null }>`SELECT fingerprint, remote FROM insight_repositories
      WHERE fingerprint IN (SELECT value FROM json_each(${JSON.stringify(fingerprints)}))`;
    return new Map(rows.map((row) => [row.fingerprint, row.remote]));
  }

  private recordTask(fact: InsightTaskFact): void {
    const known = this.task(fact.task_id);
    const repository = fact.repository?.fingerprint ?? "";
    if (fact.repository)
      this
        .sql`INSERT INTO insight_repositories (fingerprint, remote, at) VALUES (${repository}, ${fact.repository.remote}, ${fact.completed_at})
        ON CONFLICT (fingerprint) DO UPDATE SET remote = excluded.remote, at = excluded.at WHERE excluded.at >= at`;
    // A task stays in the group it was first counted in (the bound on groups never moves it).
    const key: Key = known
      ? { day: known.day, agent: known.agent, model: known.model, repository: known.repository }
      : { day: fact.completed_at.slice(0, 10), ...this.group(name(fact.agent), name(fact.model), repository) };
    const completedAt = Date.parse(fact.completed_at);
    const sums = contribution(fact, this.verdictState(fact.task_id, completedAt), this.durabilityState(fact.task_id, completedAt));
    this.sql`INSERT INTO insight_tasks (task_id, workflow_id, day, agent, model, repository, completed_at, fact, contribution)
      VALUES (${fact.task_id}, ${fact.workflow_id}, ${key.day}, ${key.agent}, ${key.model}, ${key.repository}, ${completedAt},
        ${JSON.stringify(fact)}, ${JSON.stringify(sums)})
      ON CONFLICT (task_id) DO UPDATE SET fact = excluded.fact, contribution = excluded.contribution`;
    if (known) this.addToBucket(key, parseSums(known.contribution), -1);
    this.addToBucket(key, sums, 1);
  }

  private recordVerdict(verdict: InsightVerdictFact): void {
    const inserted = this.sql`INSERT INTO insight_verdicts (feedback_id, task_id, verdict, at)
      VALUES (${verdict.feedback_id}, ${verdict.task_id}, ${verdict.verdict}, ${Date.parse(verdict.at)})
      ON CONFLICT (feedback_id) DO NOTHING RETURNING feedback_id`;
    if (inserted.length > 0) this.recount(verdict.task_id);
  }

  private recordDurability(seen: InsightDurabilityFact): void {
    const task = this.task(seen.task_id);
    // Only an observation made in the task's own repository speaks of its lines (and only one of this account's tasks).
    if (!task || task.repository === "" || task.repository !== seen.repository || seen.task_id === seen.reported_by) return;
    const recorded = Math.max(0, Math.trunc(seen.recorded));
    this.sql`INSERT INTO insight_durability (task_id, reported_by, at, recorded, present, kind, commit_id)
      VALUES (${seen.task_id}, ${seen.reported_by}, ${Date.parse(seen.at)}, ${recorded},
        ${Math.min(recorded, Math.max(0, Math.trunc(seen.present)))}, ${seen.kind}, ${seen.commit})
      ON CONFLICT (task_id, reported_by) DO UPDATE SET at = excluded.at, recorded = excluded.recorded, present = excluded.present,
        kind = excluded.kind, commit_id = excluded.commit_id`;
    this.recount(seen.task_id);
  }

  /** The task's contribution again (its verdicts or observations changed), moved in its bucket. */
  private recount(taskId: string): void {
    const task = this.task(taskId);
    if (!task) return;
    const fact = JSON.parse(task.fact) as InsightTaskFact;
    const sums = contribution(fact, this.verdictState(taskId, task.completed_at), this.durabilityState(taskId, task.completed_at));
    this.sql`UPDATE insight_tasks SET contribution = ${JSON.stringify(sums)} WHERE task_id = ${taskId}`;
    this.addToBucket(task, addSums(sums, parseSums(task.contribution), -1), 1);
  }

  private task(taskId: string): TaskRow | undefined {
    return this.sql<TaskRow>`SELECT task_id, day, agent, model, repository, completed_at, fact, contribution FROM insight_tasks
      WHERE task_id = ${taskId}`[0];
  }

  /** The group a new task is counted in: its own, unless the account already keeps INSIGHT_GROUPS apart. */
  private group(agent: string, model: string, repository: string): Pick<Key, "agent" | "model" | "repository"> {
    const key = { agent, model, repository };
    if (this.sql`SELECT 1 FROM insight_groups WHERE agent = ${agent} AND model = ${model} AND repository = ${repository}`.length > 0)
      return key;
    const kept = this.sql<{ n: number }>`SELECT count(*) AS n FROM insight_groups`[0]?.n ?? 0;
    if (kept >= LIMITS.INSIGHT_GROUPS) return { agent: OTHER_GROUP, model: OTHER_GROUP, repository: OTHER_GROUP };
    this.sql`INSERT INTO insight_groups (agent, model, repository) VALUES (${agent}, ${model}, ${repository})`;
    return key;
  }

  /**
   * The task's people's verdicts given once it completed (as the review counts read them,
   * @waymark/protocol/review-counts: one given while it ran was about work not done yet): the
   * latest, and the wait for the first.
   */
  private verdictState(taskId: string, completedAt: number): VerdictState | null {
    const rows = this.sql<{ verdict: string; at: number }>`SELECT verdict, at FROM insight_verdicts
      WHERE task_id = ${taskId} AND at >= ${completedAt} ORDER BY at, feedback_id`;
    const [first, latest] = [rows[0], rows.at(-1)];
    if (!first || !latest) return null;
    return {
      latest: latest.verdict === "approved" ? "approved" : "changes_requested",
      wait_seconds: Math.round((first.at - completedAt) / 1000),
    };
  }

  /** The task's latest observation, and its first one INSIGHT_DURABILITY_DAYS or more after its completion. */
  private durabilityState(taskId: string, completedAt: number): DurabilityState | null {
    const rows = this.sql<{ at: number; recorded: number; present: number; kind: string }>`SELECT at, recorded, present, kind
      FROM insight_durability WHERE task_id = ${taskId} ORDER BY at, reported_by`;
    if (rows.length === 0) return null;
    const seen = (row: (typeof rows)[number] | undefined) =>
      row
        ? { recorded: row.recorded, present: row.present, kind: row.kind === "signed" ? ("signed" as const) : ("claimed" as const) }
        : null;
    const due = completedAt + LIMITS.INSIGHT_DURABILITY_DAYS * DAY_MS;
    return { latest: seen(rows.at(-1)), at_days: seen(rows.find((row) => row.at >= due)) };
  }

  /** Adds `sums` × `sign` to the day and month buckets of the task's day and group: two rows written. */
  private addToBucket(key: Key, sums: Sums, sign: number): void {
    if (sums.every((value) => value === 0)) return;
    const day = dayNumber(key.day);
    for (const kind of STORED_KINDS) {
      const start = dayOf(bucketStart(day, kind));
      const row = this.sql<{ sums: string }>`SELECT sums FROM insight_buckets WHERE kind = ${kind} AND start = ${start}
        AND agent = ${key.agent} AND model = ${key.model} AND repository = ${key.repository}`[0];
      const next = addSums(row ? parseSums(row.sums) : zeroSums(), sums, sign);
      this.sql`INSERT INTO insight_buckets (kind, start, agent, model, repository, sums)
        VALUES (${kind}, ${start}, ${key.agent}, ${key.model}, ${key.repository}, ${JSON.stringify(next)})
        ON CONFLICT (kind, start, agent, model, repository) DO UPDATE SET sums = excluded.sums`;
    }
  }

  /** Every bucket again from the task rows (a new layout of the sums): each task's contribution recomputed. */
  private rebuild(): void {
    this.sql`DELETE FROM insight_buckets`;
    const tasks = this.sql<TaskRow>`SELECT task_id, day, agent, model, repository, completed_at, fact, contribution FROM insight_tasks`;
    const buckets = new Map<string, { kind: StoredKind; start: string; key: Key; sums: Sums }>();
    for (const task of tasks) {
      const fact = JSON.parse(task.fact) as InsightTaskFact;
      const sums = contribution(
        fact,
        this.verdictState(task.task_id, task.completed_at),
        this.durabilityState(task.task_id, task.completed_at),
      );
      this.sql`UPDATE insight_tasks SET contribution = ${JSON.stringify(sums)} WHERE task_id = ${task.task_id}`;
      for (const kind of STORED_KINDS) {
        const start = dayOf(bucketStart(dayNumber(task.day), kind));
        const id = [kind, start, task.agent, task.model, task.repository].join("\u0000");
        const bucket = buckets.get(id) ?? { kind, start, key: task, sums: zeroSums() };
        addSums(bucket.sums, sums);
        buckets.set(id, bucket);
      }
    }
    for (const { kind, start, key, sums } of buckets.values())
      this.sql`INSERT INTO insight_buckets (kind, start, agent, model, repository, sums)
        VALUES (${kind}, ${start}, ${key.agent}, ${key.model}, ${key.repository}, ${JSON.stringify(sums)})`;
  }
}
