// The wire contract of docs/attribution.md. The helper is published on its own, so it
// keeps its own copy of these types instead of importing the Worker's.

export type FileState = { mode: string; blob: string };

export type DirtyEntry = {
  path: string;
  head: FileState | null;
  worktree: FileState | null;
};

export type Transition = {
  path: string;
  before: FileState | null;
  after: FileState | null;
};

export type GitSnapshot = {
  type: "git";
  head: string | null;
  branch?: string | null;
  dirty: DirtyEntry[];
};

export type ChecksumSnapshot = {
  type: "checksum";
  files: number;
  digest: string;
};

export type Snapshot = GitSnapshot | ChecksumSnapshot;

export type GitChanges = {
  type: "git";
  start_head: string | null;
  head: string | null;
  committed: Transition[];
  dirty: DirtyEntry[];
};

export type ChecksumChanges = { type: "checksum"; transitions: Transition[] };

export type Changes = GitChanges | ChecksumChanges;

/** One file of a checksum scan; mtime and size let the next scan skip re-hashing it. */
export type ChecksumEntry = {
  mode: string;
  blob: string;
  size: number;
  mtimeMs: number;
};

/**
 * What the helper keeps on the machine for a non-git directory: the wire part plus the
 * full checksum list, which never leaves the machine.
 */
export type LocalChecksumSnapshot = ChecksumSnapshot & {
  root: string;
  scanned_at: number;
  entries: Record<string, ChecksumEntry>;
};

export type LocalGitSnapshot = GitSnapshot & { root: string };

export type LocalSnapshot = LocalGitSnapshot | LocalChecksumSnapshot;
