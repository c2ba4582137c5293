/**
 * What the own-cost sections (cost-ab, floor) send: a helper's 100-file change as a signed
 * completion carries it, the log entry the floor Worker's object stores (bench/floor-worker), and
 * a POST to that Worker. One definition, so the two sections measure the same calls.
 */
import type { DevServer } from "../../test/support/dev-server.ts";

const HEAD = "c".repeat(40);

/** What a helper sends for 100 files added and left uncommitted during task `t`. */
export function gitChanges(t: number) {
  const dirty = Array.from({ length: 100 }, (_, k) => ({
    path: `src/t${t}/file-${k}.ts`,
    head: null,
    worktree: { mode: "100644", blob: (t * 1000 + k + 1).toString(16).padStart(40, "a") },
  }));
  return { type: "git", start_head: HEAD, head: HEAD, committed: [], dirty };
}

/** The same 100 files as the floor Worker's `POST /complete` takes them (a signed completion's essentials). */
export function floorFiles(t: number): string {
  return JSON.stringify({ files: gitChanges(t).dirty.map((f) => ({ path: f.path, blob: f.worktree.blob })) });
}

/** A log entry's JSON text as the object stores one (ids, message, progress, time, author, hash chain): about 330 bytes. */
export const ENTRY = JSON.stringify({
  id: `mil_${"0".repeat(26)}`,
  workflow_id: `wf_${"1".repeat(26)}`,
  task_id: `tsk_${"2".repeat(26)}`,
  message: "m",
  progress: 50,
  created_at: "2026-11-29T18:00:00.000Z",
  author: "dev",
  hash: "a".repeat(64),
  prev_hash: "b".repeat(64),
});

/** A POST to the floor Worker (its `/rpc`, `/write`, `/complete`), its body read to the end. */
export async function floorPost(server: DevServer, path: string, body: string): Promise<void> {
  const response = await fetch(`${server.url}${path}`, { method: "POST", body, headers: { "content-type": "application/json" } });
  await response.arrayBuffer();
  if (!response.ok) throw new Error(`floor ${path} answered ${response.status}`);
}
