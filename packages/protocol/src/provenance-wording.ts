/**
 * @module provenance-wording
 * Where a record's figures come from, in one wording for every rendering (the page, the
 * Markdown export, `waymark summary`): which repository and branch a task ran in, whether its
 * files were computed by the Waymark helper (and which version) or reported by the client, which
 * changed files the agent's own edit tools did not touch, who wrote the added lines, and whether
 * usage was summed from the agent's transcript or is the agent's claim.
 */
import { lineAuthorsText, type TaskLineAuthors } from "./line-authors";

export interface RepositoryRef {
  remote: string | null;
  branch: string | null;
  fingerprint: string | null;
  start_commit?: string | null;
  end_commit?: string | null;
}

export interface ProvenanceTask {
  name: string;
  repository?: RepositoryRef | null;
  files_changed: {
    added: string[];
    modified: string[];
    deleted: string[];
    renamed: unknown[];
    source?: { kind: "helper"; version: string } | { kind: "client" };
    not_by_agent_tools?: string[];
    line_authors?: TaskLineAuthors;
  } | null;
  metrics?: { source?: "transcript" | "agent" | null; price_table_date?: string | null } | null;
}

/** Who wrote a task's added lines, as a provenance statement (./line-authors.ts words it); null when its lines were not attributed. */
export function lineAuthorsStatement(authors: TaskLineAuthors | undefined): { label: string; text: string } | null {
  return authors ? { label: "Lines", text: lineAuthorsText(authors) } : null;
}

const shortCommit = (commit: string | null) => (commit ? commit.slice(0, 10) : null);

/** "github.com/acme/app · branch main", or null when no repository was reported. */
export function repositoryText(
  repository: { remote: string | null; branch: string | null; fingerprint: string | null } | null | undefined,
): string | null {
  if (!repository) return null;
  const name = repository.remote ?? `local repository ${repository.fingerprint?.slice(0, 12) ?? "(unidentified)"}`;
  return repository.branch ? `${name} · branch ${repository.branch}` : `${name} · detached HEAD`;
}

/** The provenance statements of one task, in reading order (empty for a task recorded before provenance was kept). */
export function taskProvenance(t: ProvenanceTask): { label: string; text: string; paths?: string[] }[] {
  const lines: { label: string; text: string; paths?: string[] }[] = [];
  const repo = t.repository;
  const where = repositoryText(repo);
  if (repo && where) {
    const commits = [shortCommit(repo.start_commit ?? null), shortCommit(repo.end_commit ?? null)].filter((c) => c !== null);
    lines.push({ label: "Repository", text: commits.length > 0 ? `${where} · ${commits.join(" → ")}` : where });
  }
  const f = t.files_changed;
  if (f?.source) {
    lines.push({
      label: "Files",
      text:
        f.source.kind === "helper"
          ? `computed by waymark-helper ${f.source.version}`
          : "reported by the client (not computed by the Waymark helper)",
    });
  }
  if (f?.not_by_agent_tools) {
    const listed = f.added.length + f.modified.length + f.deleted.length + f.renamed.length;
    const byAgent = Math.max(0, listed - f.not_by_agent_tools.length);
    lines.push(
      f.not_by_agent_tools.length === 0
        ? { label: "Agent edits", text: "every changed file was edited by the agent's own edit tools" }
        : {
            label: "Agent edits",
            text: `${byAgent} file(s) edited by the agent's own edit tools; not touched by them (a command, a generator or someone else):`,
            paths: f.not_by_agent_tools,
          },
    );
  }
  const authors = lineAuthorsStatement(f?.line_authors);
  if (authors) lines.push(authors);
  if (t.metrics?.source) {
    lines.push({
      label: "Usage",
      text:
        t.metrics.source === "transcript"
          ? `from the agent's transcript${t.metrics.price_table_date ? ` (cost from the price table of ${t.metrics.price_table_date})` : ""}`
          : "as reported by the agent (not verified)",
    });
  }
  return lines;
}

/** One task's lines of the Provenance section (none for a task recorded before provenance was kept). */
export function markdownTaskProvenance(task: ProvenanceTask, escapeMarkdown: (text: string) => string): string[] {
  const lines = taskProvenance(task);
  if (lines.length === 0) return [];
  return [
    `- **${escapeMarkdown(task.name)}**`,
    ...lines.map(
      (line) =>
        `  - ${line.label}: ${escapeMarkdown(line.text)}${line.paths ? ` ${line.paths.map((path) => escapeMarkdown(path)).join(", ")}` : ""}`,
    ),
  ];
}
