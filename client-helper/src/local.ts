/**
 * @module local
 * What the helper keeps on the machine next to the wire data of @waymark/protocol/wire:
 * the project root and, for a non-git directory, the full checksum list (which never leaves
 * the machine).
 */
import type { ChecksumSnapshot, GitSnapshot } from "@waymark/protocol/wire";

/** One file of a checksum scan; the stat fields let the next scan skip re-hashing it (git's rules). */
export type ChecksumEntry = {
  mode: string;
  blob: string;
  size: number;
  mtimeMs: number;
  ctimeMs?: number;
  ino?: number;
};

/** A checksum scan's files in path order (JavaScript string order): `entries[i]` is the file at `paths[i]`. */
export type ChecksumList = {
  paths: string[];
  entries: ChecksumEntry[];
};

export type LocalChecksumSnapshot = ChecksumSnapshot &
  ChecksumList & {
    root: string;
    scanned_at: number;
  };

export type LocalGitSnapshot = GitSnapshot & {
  root: string;
  git_dir?: string;
  /** Digest of the ignore rules that live outside the working tree (info/exclude, a local core.excludesFile). */
  ignore_rules?: string;
  /** Where the start contents of files in no git object were copied (client-helper/src/review-measures.ts). */
  start_contents?: string;
};

export type LocalSnapshot = LocalGitSnapshot | LocalChecksumSnapshot;
