/**
 * @module hooks/spool
 * Recording an edit without starting Node. The agent runs its edit hook after every edit tool
 * call; Node's start-up alone costs more CPU than recording the edit is worth (about 40 ms on an
 * idle machine, measured: bench/sections/hooks.ts), and on a busy machine that CPU is taken from
 * the agent. So the installed edit hook is a POSIX shell line (@waymark/protocol/agent-config's
 * spoolCommand) that writes the agent's payload, as it is, to a file of its own in the user's
 * cache dir (`<cache>/spool/<agent>.XXXXXXXXXX`); the
 * helper, already running for another reason (a stop hook, complete_task), reads those files into
 * the hooks' journal (./journal.ts) before it reads the journal: each edit is dated by its file's
 * modification time and goes to the tasks that were open then.
 */
import { readdirSync, readFileSync, type Stats, statSync, unlinkSync } from "node:fs";
import { join } from "node:path";
import { SPOOL_DIR } from "@waymark/protocol/agent-config";
import { Journal, repositoryRoot } from "./journal.js";

/**
 * How one spooled payload is recorded (../hooks/hook-runner.ts's recordToolCall): into the journal of
 * the directory the agent worked in, for the tasks open `at`, as what `agent`'s tool call did; the
 * number of tasks that got it. Null: the agent is not one whose hooks spool.
 */
export type SpoolRecorder = {
  journalDir(payload: Record<string, unknown>, agent: string): string | null;
  record(journal: Journal, payload: Record<string, unknown>, agent: string, at: number): Promise<number | null>;
};

/** A spooled payload this large is no agent's edit report: dropped unread. */
const PAYLOAD_LIMIT = 64 * 1024 * 1024;
/** A payload that does not parse may still be being written; older than this it never will be. */
const WRITING_MS = 60_000;

/**
 * Reads every spooled payload into the journal of the repository it was made in, then deletes it.
 * A payload is claimed by removing it once read, so two helpers draining at once record each edit once.
 * The payloads of one journal are recorded as one batch (Journal.startBatch: its stop state kept
 * once, not after each). `known`: journals the caller already has, by the directory a payload
 * names (its `cwd`), so no git process is started to find their repository again.
 * Its files are read and claimed synchronously, as the journal writes its own: each is
 * small, and each operation through the thread pool costs a round trip on the way of the answer
 * (ten spooled edits held a complete_task for 15-45 ms that way on a busy machine, measured).
 * Never throws: an unreadable payload is an edit not recorded, never a failed tool call or hook.
 */
export async function drainSpool(cache: string, recorder: SpoolRecorder, known?: ReadonlyMap<string, Journal>): Promise<number> {
  const dir = join(cache, SPOOL_DIR);
  const spooled: { path: string; agent: string; info: Stats }[] = [];
  for (const name of listed(dir)) {
    const agent = name.slice(0, Math.max(0, name.indexOf(".")));
    // A `.claimed-<pid>` name: a payload an older helper (which renamed to claim) is recording or was when it stopped.
    if (agent === "" || name.includes(".claimed-")) continue;
    const info = statSync(join(dir, name), { throwIfNoEntry: false });
    if (info) spooled.push({ path: join(dir, name), agent, info });
  }
  // In the order the edits were made: a task's paths are kept in first-edit order.
  spooled.sort((a, b) => a.info.mtimeMs - b.info.mtimeMs || a.path.localeCompare(b.path));
  if (spooled.length === 0) return 0;
  const journals = new Map<string, Promise<Journal>>([...(known ?? [])].map(([dir, journal]) => [dir, Promise.resolve(journal)]));
  const batched = new Set<Journal>();
  let recorded = 0;
  try {
    for (const { path, agent, info } of spooled) {
      try {
        recorded += await drainOne(path, agent, info, cache, journals, recorder, batched);
      } catch {
        // Next payload.
      }
    }
  } finally {
    await Promise.all([...batched].map((journal) => journal.endBatch()));
  }
  return recorded;
}

/** The spool's file names; none when it does not exist. */
function listed(dir: string): string[] {
  try {
    return readdirSync(dir);
  } catch {
    return [];
  }
}

async function drainOne(
  path: string,
  agent: string,
  info: Stats,
  cache: string,
  journals: Map<string, Promise<Journal>>,
  recorder: SpoolRecorder,
  batched: Set<Journal>,
): Promise<number> {
  let payload: Record<string, unknown> | null = null;
  if (info.size <= PAYLOAD_LIMIT) {
    try {
      const parsed: unknown = JSON.parse(readFileSync(path, "utf8"));
      if (parsed && typeof parsed === "object") payload = parsed as Record<string, unknown>;
    } catch {
      // Still being written, or never a payload.
      if (Date.now() - info.mtimeMs < WRITING_MS) return 0;
    }
  }
  // Claimed by removing it: of two helpers that read it, only the one whose unlink succeeds records it
  // (a rename to a claimed name, then its removal, cost two metadata writes per edit for the same).
  unlinkSync(path);
  const cwd = payload ? recorder.journalDir(payload, agent) : null;
  if (!payload || cwd === null) return 0;
  const known = journals.get(cwd) ?? repositoryRoot(cwd).then((root) => new Journal(root, cache));
  journals.set(cwd, known);
  const journal = await known;
  if (!batched.has(journal)) {
    journal.startBatch();
    batched.add(journal);
  }
  return ((await recorder.record(journal, payload, agent, info.mtimeMs)) ?? 0) > 0 ? 1 : 0;
}
