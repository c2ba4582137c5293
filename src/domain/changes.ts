/**
 * @module changes
 * Change attribution at the edge: the shared rule of @waymark/protocol/attribution applied to
 * the helper's wire data (@waymark/protocol/wire). Kept as a module of its own so the edge
 * imports one place for the rule and the types it works on.
 */
export {
  type ChangeStatus,
  ChangesMismatchError,
  changeStatus,
  computeNetChanges,
  EMPTY_BLOB,
  type FilesChanged,
  helperWarnings,
  type PathChange,
  sameFileState,
  summarizeChanges,
  truncationOf,
} from "@waymark/protocol/attribution";
export type {
  Changes,
  ChecksumChanges,
  ChecksumSnapshot,
  DirtyEntry,
  FileState,
  GitChanges,
  GitSnapshot,
  NetChanges,
  NetTransition,
  Snapshot,
  Transition,
  Truncation,
  Unavailable,
} from "@waymark/protocol/wire";
