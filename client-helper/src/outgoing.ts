/**
 * @module outgoing
 * What the helper sends to the edge, always within the edge's limits, so a task can always be
 * started and completed. Below the documented ceilings (WIRE_LIMITS.HELPER_LIST_ENTRIES entries
 * per list, HELPER_LIST_BYTES of serialized lists) the observations go as they are and the edge
 * resolves them. Above, the helper resolves them itself with the shared attribution rule and
 * sends the net list, cut at the ceiling and summarised per directory beyond it (`truncated`).
 */
import { computeNetChanges, type PathChange } from "@waymark/protocol/attribution";
import { limitChanges } from "@waymark/protocol/truncation";
import type { Changes, NetTransition, Snapshot } from "@waymark/protocol/wire";
import { WIRE_LIMITS } from "@waymark/protocol/wire-constants";
import type { LocalSnapshot } from "./local.js";
import { wireSnapshot } from "./snapshot.js";

/** Helper text the edge accepts: no control characters (a directory name may hold any), bounded. */
export function readableWarning(text: string): string {
  const clean = text.replace(/[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f]/g, "?").toWellFormed();
  return clean.length <= WIRE_LIMITS.WARNING_CHARS ? clean : `${clean.slice(0, WIRE_LIMITS.WARNING_CHARS - 1)}…`;
}

function jsonBytes(value: unknown): number {
  return Buffer.byteLength(JSON.stringify(value));
}

function fits(lists: readonly (readonly unknown[])[]): boolean {
  if (lists.some((list) => list.length > WIRE_LIMITS.HELPER_LIST_ENTRIES)) return false;
  return jsonBytes(lists) <= WIRE_LIMITS.HELPER_LIST_BYTES;
}

/** The start snapshot as sent: whole, or with its dirty list left on the machine when too large. */
export function outgoingSnapshot(local: LocalSnapshot): Snapshot {
  const wire = withReadableWarnings(wireSnapshot(local));
  if (wire.type !== "git" || fits([wire.dirty])) return wire;
  return { ...wire, dirty: [], dirty_omitted: wire.dirty.length };
}

/** The helper's warnings as the edge accepts them (they may quote directory names, which may hold anything). */
function withReadableWarnings<Data extends Snapshot | Changes>(data: Data): Data {
  if (data.type === "unavailable" || data.warnings === undefined) return data;
  return { ...data, warnings: data.warnings.slice(0, WIRE_LIMITS.WARNINGS).map(readableWarning) };
}

/** The paths a task changed per the shared rule (before any ceiling), to compare with other tasks. */
export function changedPaths(start: LocalSnapshot, changes: Changes): string[] {
  if (changes.type === "unavailable") return [];
  return computeNetChanges(wireSnapshot(start), changes).map((change) => change.path);
}

/** The end observations as sent: as they are when they and the start snapshot fit, else resolved here. */
export function outgoingChanges(start: LocalSnapshot, changes: Changes): Changes {
  const sentStart = outgoingSnapshot(start);
  const startWhole = !(sentStart.type === "git" && sentStart.dirty_omitted !== undefined);
  if (changes.type === "git" && startWhole && fits([changes.committed, changes.dirty])) return withReadableWarnings(changes);
  if (changes.type === "checksum" && fits([changes.transitions])) return withReadableWarnings(changes);
  if (changes.type !== "git" && changes.type !== "checksum") return withReadableWarnings(changes);
  const net = computeNetChanges(wireSnapshot(start), changes);
  const toWire = (change: PathChange): NetTransition => {
    const transition: NetTransition = { path: change.path, before: change.before, after: change.after };
    if (changes.type === "git") transition.committed = change.committed;
    return transition;
  };
  const { listed, truncated } = limitChanges(net, (change) => jsonBytes(toWire(change)) + 1);
  const out: Changes = { type: "net", transitions: listed.map(toWire) };
  const warnings = [...(changes.warnings ?? [])];
  if (truncated) {
    out.truncated = truncated;
    warnings.push(
      `${net.length} files changed, more than the ${WIRE_LIMITS.HELPER_LIST_ENTRIES} (or ${WIRE_LIMITS.HELPER_LIST_BYTES / 1024 / 1024} MiB) the helper lists: ${listed.length} are listed, the other ${truncated.omitted} are counted per directory in files_changed.truncated. A build output or dependency folder that is not ignored is the usual cause: add it to .gitignore.`,
    );
  }
  if (warnings.length > 0) out.warnings = warnings;
  return withReadableWarnings(out);
}
