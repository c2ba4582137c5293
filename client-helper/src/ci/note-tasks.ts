/**
 * @module ci/note-tasks
 * The tasks the repository's own notes name for a range's commits (refs/notes/waymark and its
 * remote-tracking copies, read by ../notes/store.ts): what `waymark ci` adds to the endpoint's
 * answer, and works from alone when the endpoint is unreachable. An entry on a task's end commit
 * holds the task's whole Agent Trace record: who wrote its lines (the agent's `ai` ranges, others'
 * `unknown` ranges, the lines no hook observed), the agent and the model.
 */
import type { TaskNote } from "@waymark/protocol/git-note";
import type { LineAuthors } from "@waymark/protocol/line-authors";
import type { GitContext } from "../git/process.js";
import { readNotes } from "../notes/store.js";

/** One task the notes name for the range. */
export interface NoteTask {
  /** The range's commit whose note names it (its end commit's when the range holds it). */
  commit: string;
  workflow_id: string;
  task_id: string;
  name: string;
  /** The deployment that recorded it, as the note says. */
  origin: string | null;
  agent: string | null;
  model: string | null;
  files: string[];
  lines: LineAuthors;
  file_authors: ({ path: string } & LineAuthors)[];
}

type Json = { [key: string]: unknown };
const isObject = (value: unknown): value is Json => value !== null && typeof value === "object" && !Array.isArray(value);
const span = (range: unknown) =>
  Array.isArray(range) && typeof range[0] === "number" && typeof range[1] === "number" ? Math.max(0, range[1] - range[0] + 1) : 0;

/** What one entry says of its task: its name, agent and model, and per file who wrote the lines. */
function fromEntry(entry: TaskNote): Omit<NoteTask, "commit" | "workflow_id" | "task_id" | "origin"> {
  const record = entry.record as Json;
  const metadata = isObject(record.metadata) && isObject(record.metadata["dev.waymark"]) ? record.metadata["dev.waymark"] : {};
  const byFile = new Map<string, LineAuthors>();
  const file = (path: string) => {
    const found = byFile.get(path) ?? { agent: 0, others: 0, not_observed: 0 };
    byFile.set(path, found);
    return found;
  };
  let model: string | null = null;
  for (const item of Array.isArray(record.files) ? record.files : []) {
    if (!isObject(item) || typeof item.path !== "string") continue;
    const authors = file(item.path);
    for (const conversation of Array.isArray(item.conversations) ? item.conversations : []) {
      if (!isObject(conversation)) continue;
      const contributor = isObject(conversation.contributor) ? conversation.contributor : {};
      if (typeof contributor.model_id === "string") model ??= contributor.model_id;
      for (const range of Array.isArray(conversation.ranges) ? conversation.ranges : []) {
        if (!isObject(range)) continue;
        const lines = span([range.start_line, range.end_line]);
        const who = isObject(range.contributor) ? range.contributor.type : contributor.type;
        if (who === "ai") authors.agent += lines;
        else authors.others += lines;
      }
    }
  }
  for (const item of entry.not_observed ?? []) for (const range of item.ranges) file(item.path).not_observed += span(range);
  const lines: LineAuthors = { agent: 0, others: 0, not_observed: 0 };
  for (const authors of byFile.values()) {
    lines.agent += authors.agent;
    lines.others += authors.others;
    lines.not_observed += authors.not_observed;
  }
  return {
    name: typeof metadata.task_name === "string" ? metadata.task_name : entry.task_id,
    agent: typeof metadata.agent === "string" ? metadata.agent : null,
    model,
    files: [...byFile.keys()],
    lines,
    file_authors: [...byFile].map(([path, authors]) => ({ path, ...authors })),
  };
}

/**
 * The tasks the notes name for `commits`, one per task: from the entry on its end commit when the
 * range holds it (the task's whole record), else from the first entry met.
 */
export async function noteTasks(context: GitContext, commits: readonly string[]): Promise<NoteTask[]> {
  if (commits.length === 0) return [];
  const read = await readNotes(context, new Set(commits));
  const tasks = new Map<string, { entry: TaskNote; commit: string }>();
  for (const commit of commits) {
    for (const entry of read.byCommit.get(commit)?.entries ?? []) {
      const key = `${entry.workflow_id}\0${entry.task_id}`;
      const known = tasks.get(key);
      const whole = entry.commit === entry.task.end_commit;
      if (!known || (whole && known.entry.commit !== known.entry.task.end_commit)) tasks.set(key, { entry, commit });
    }
  }
  return [...tasks.values()].map(({ entry, commit }) => ({
    commit,
    workflow_id: entry.workflow_id,
    task_id: entry.task_id,
    origin: entry.origin,
    ...fromEntry(entry),
  }));
}
