/**
 * @module diff-links
 * Where a reviewer sees one file's change: on the repository's host, when the recorded remote is a
 * host whose compare view is known (GitHub, GitLab, Bitbucket) and the task's start and end commits
 * were recorded, a compare URL between them pointing at the file; and always the exact `git diff`
 * command that shows it in a clone. A change left uncommitted is on the developer's machine only:
 * no host has it, and the command compares the start commit with that machine's working tree.
 * Built from what the helper recorded (the remote without credentials, as
 * ./repository-fingerprint.ts normalises it: `github.com/acme/app`), never from a URL an agent wrote.
 */
import { createHash } from "node:crypto";

export interface FileChangeRef {
  /** The normalised remote (`host/path`), or null when the repository has none. */
  remote: string | null;
  start: string | null;
  end: string | null;
  path: string;
  /** The change was not carried by a commit made during the task. */
  uncommitted: boolean;
}

export interface DiffLink {
  /** The compare view on the host, at the file; absent when the host or a commit is not known, or the change is uncommitted. */
  url?: string;
  /** The host's name as a person knows it ("GitHub"). */
  host?: string;
  /** The command that shows the change in a clone; absent when no start commit was recorded. */
  command?: string;
}

const COMMIT = /^[0-9a-f]{40}(?:[0-9a-f]{24})?$/;
/** A path segment of a hosted repository's name: what the hosts allow, nothing that could reach another URL. */
const SEGMENT = /^[A-Za-z0-9_.-]+$/;

const hex = (algorithm: "sha1" | "sha256", text: string) => createHash(algorithm).update(text, "utf8").digest("hex");

/** The compare URL of each known host, at one file (each host names a file in its compare view its own way). */
const HOSTS: Record<string, { name: string; url: (repo: string, start: string, end: string, path: string) => string }> = {
  "github.com": {
    name: "GitHub",
    url: (repo, start, end, path) => `https://github.com/${repo}/compare/${start}...${end}#diff-${hex("sha256", path)}`,
  },
  "gitlab.com": {
    name: "GitLab",
    url: (repo, start, end, path) => `https://gitlab.com/${repo}/-/compare/${start}...${end}?straight=true#${hex("sha1", path)}`,
  },
  "bitbucket.org": {
    name: "Bitbucket",
    url: (repo, start, end, path) => `https://bitbucket.org/${repo}/branches/compare/${end}%0D${start}#chg-${encodeURIComponent(path)}`,
  },
};

/** A word for a POSIX shell: as it is when it is plainly safe, else in single quotes. */
export function shellWord(text: string): string {
  return /^[A-Za-z0-9_./@%+=:,-]+$/.test(text) ? text : `'${text.replace(/'/g, `'\\''`)}'`;
}

/** Where a file's change can be seen (see the module comment). */
export function diffLink(ref: FileChangeRef): DiffLink {
  const start = ref.start !== null && COMMIT.test(ref.start) ? ref.start : null;
  const end = ref.end !== null && COMMIT.test(ref.end) ? ref.end : null;
  if (start === null) return {};
  const path = shellWord(ref.path);
  // Starting with "-" a path would read as an option, but after "--" it cannot.
  if (ref.uncommitted || end === null) return { command: `git diff ${start} -- ${path}` };
  const link: DiffLink = { command: `git diff ${start}..${end} -- ${path}` };
  const [host, ...rest] = (ref.remote ?? "").split("/");
  const known = host === undefined ? undefined : HOSTS[host];
  if (known && rest.length >= 2 && rest.every((segment) => SEGMENT.test(segment) && segment !== "." && segment !== "..")) {
    link.url = known.url(rest.join("/"), start, end, ref.path);
    link.host = known.name;
  }
  return link;
}
