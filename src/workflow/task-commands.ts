/**
 * @module workflow/task-commands
 * The shell commands the helper's hooks observed during a task, in this workflow's SQLite: one
 * `task_commands` row per command (its place in time order, the command line as the helper sent
 * it: redacted and bounded, exit code, duration, kinds), and on the task row whether commands were
 * observed at all, how many more were observed than sent, and the agent's last edit. At most
 * WIRE_LIMITS.COMMANDS rows of WIRE_LIMITS.COMMAND_BYTES each per task, so one task's commands
 * are one small statement and one small part of its view.
 */
import type { CommandKind } from "@waymark/protocol/command-kind";
import type { ObservedCommands } from "@waymark/protocol/wire";
import type { CommandRunView, TaskCommandsView } from "../domain/view";
import { isoTime, isoTimeOrNull } from "../iso-time";
import { jsonChunks } from "../storage/chunks";
import type { Sql } from "../storage/sql";
import type { WorkflowTables } from "./workflow-tables";

/** What a task row holds about its commands (the columns of workflow/records' TaskRow this module reads). */
export interface TaskCommandsColumns {
  id: string;
  commands_observed: number | null;
  commands_omitted: number | null;
  last_edit_at: number | null;
}

type CommandRowSql = {
  task_id: string;
  ord: number;
  command: string;
  truncated: number;
  at: number;
  exit_code: number | null;
  duration_ms: number | null;
  kinds: string;
};

/** The row's own cost besides its command line: what the workflow's storage quota counts. */
const COMMAND_ROW_OVERHEAD = 80;

function runView(row: CommandRowSql): CommandRunView {
  return {
    command: row.command,
    ...(row.truncated === 1 ? { truncated: true as const } : {}),
    at: isoTime(row.at),
    exit_code: row.exit_code,
    duration_ms: row.duration_ms,
    kinds: JSON.parse(row.kinds) as CommandKind[],
  };
}

/** The task row's columns about its commands: all NULL when they were not observed. */
export function commandMarks(commands: ObservedCommands | null): {
  observed: 1 | null;
  omitted: number | null;
  lastEditAt: number | null;
} {
  if (!commands) return { observed: null, omitted: null, lastEditAt: null };
  return { observed: 1, omitted: commands.omitted ?? 0, lastEditAt: commands.last_edit_at };
}

export class TaskCommands {
  constructor(
    private readonly sql: Sql,
    private readonly tables: WorkflowTables,
  ) {}

  /**
   * Stores the observed commands of a completed task (null: not observed) as rows; returns the
   * bytes they take. Their marks on the task row (observed, omitted, last edit) are set by the
   * completion's one update of that row (commandMarks).
   */
  store(taskId: string, commands: ObservedCommands | null): number {
    if (!commands) return 0;
    let bytes = 0;
    const rows = commands.runs.map((run, ord) => {
      bytes += COMMAND_ROW_OVERHEAD + run.command.length;
      return [ord, run.command, run.truncated ? 1 : 0, run.at, run.exit_code, run.duration_ms, JSON.stringify(run.kinds)];
    });
    if (rows.length > 0) this.tables.ensure("task_commands");
    for (const chunk of jsonChunks(rows)) {
      this.sql`INSERT INTO task_commands (task_id, ord, command, truncated, at, exit_code, duration_ms, kinds)
        SELECT ${taskId}, value ->> 0, value ->> 1, value ->> 2, value ->> 3, value ->> 4, value ->> 5, value ->> 6
        FROM json_each(${chunk}) WHERE true`;
    }
    return bytes;
  }

  /** The commands of several tasks, by task; a task whose commands were not observed is absent. */
  views(tasks: readonly TaskCommandsColumns[]): Map<string, TaskCommandsView> {
    const views = new Map<string, TaskCommandsView>();
    const observed = tasks.filter((task) => task.commands_observed === 1);
    if (observed.length === 0) return views;
    for (const task of observed) {
      views.set(task.id, {
        runs: [],
        omitted: task.commands_omitted ?? 0,
        last_edit_at: isoTimeOrNull(task.last_edit_at),
      });
    }
    if (!this.tables.has("task_commands")) return views;
    const ids = JSON.stringify(observed.map((task) => task.id));
    for (const row of this.sql<CommandRowSql>`
      SELECT task_id, ord, command, truncated, at, exit_code, duration_ms, kinds FROM task_commands
      WHERE task_id IN (SELECT value FROM json_each(${ids})) ORDER BY task_id, ord`) {
      views.get(row.task_id)?.runs.push(runView(row));
    }
    return views;
  }
}
