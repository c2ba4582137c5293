/**
 * @module device-evidence
 * `waymark verify`'s own check of every figure an export labels "computed and signed", against
 * the device-signed payloads the export carries (its `device_signed` member, one DeviceSigned per
 * payload: ./device-signature) and device keys pinned outside the server (./allowed-signers). The
 * server's label is not taken as the verdict: a task's files read "computed and signed" here only
 * when both its start snapshot and its completion were signed by one allowed key (the completion
 * naming the start's nonce, each signature over exactly its data for this workflow and task,
 * made within DEVICE_SIGNATURE_SKEW_MS of when the deployment recorded it, inside the key's
 * allowed period) and the task's files_changed, observed commands, durability observations and repository are what the
 * edge's own rule (./attribution, ./files-changed, ./review-fields) makes of that data; its usage,
 * when the completion is signed so and the figures are the signed ones. A label the payloads do
 * not bear out is a problem. Without allowed signers nothing is checked and the report says so.
 */
import { type AllowedSigner, allowedSigner } from "./allowed-signers";
import { ChangesMismatchError, computeNetChanges, type PathChange } from "./attribution";
import { DEVICE_SIGNATURE_SKEW_MS, DEVICE_SIGNED_TYPE, type DeviceSigned, deviceSignedProblem, type SignedTool } from "./device-signature";
import { diffValues, type Source } from "./export-diff";
import type { Json, JsonObject } from "./export-rebuild";
import { summarizeChanges } from "./files-changed";
import { deviceText, type FilesSource, filesKind, PROVENANCE_TERMS } from "./provenance-wording";
import { reviewFields } from "./review-fields";
import { truncationOf } from "./truncation";
import { type Changes, changesSchema, type Metrics, metricsSchema, type Snapshot, snapshotSchema } from "./wire";

export interface DeviceEvidence {
  /**
   * "checked": every figure labelled signed was checked against the allowed signers (problems
   * say which failed); "not_checked": some are labelled signed and no allowed signers were given;
   * "none": nothing is labelled signed.
   */
  status: "checked" | "not_checked" | "none";
  /** Labels with how many tasks: files per files_changed.source, usage per metrics. */
  files: Record<string, number>;
  usage: Record<string, number>;
  /** Payloads the export carries. */
  payloads: number;
}

const isObject = (value: unknown): value is JsonObject => value !== null && typeof value === "object" && !Array.isArray(value);

const SIGNED: Source = { says: "the device signed", lists: "the device's signed data" };

type Parsed = { item: DeviceSigned; index: number };

/** The payloads of the export by task and tool; a malformed one is a problem, named by its index. */
function payloadsOf(document: JsonObject, workflowId: string, problems: string[]): Map<string, Parsed> {
  const byTask = new Map<string, Parsed>();
  const items = document.device_signed;
  if (items === undefined) return byTask;
  if (!Array.isArray(items)) {
    problems.push("device_signed: a list of device-signed payloads was expected");
    return byTask;
  }
  for (const [index, value] of items.entries()) {
    const item = value as unknown as DeviceSigned;
    const message = isObject(value) ? value.message : undefined;
    const shaped =
      isObject(value) &&
      isObject(message) &&
      value.type === DEVICE_SIGNED_TYPE &&
      typeof value.task_id === "string" &&
      typeof value.fingerprint === "string" &&
      typeof value.signature === "string" &&
      (message.tool === "start_task" || message.tool === "complete_task") &&
      typeof message.subject === "string" &&
      typeof message.key === "string" &&
      Number.isSafeInteger(message.signed_at) &&
      typeof message.nonce === "string" &&
      (message.start_nonce === null || typeof message.start_nonce === "string") &&
      typeof message.digest === "string";
    if (!shaped) {
      problems.push(`device_signed[${index}]: not a device-signed payload (type, task_id, fingerprint, message, data, signature)`);
      continue;
    }
    if (item.workflow_id !== workflowId) problems.push(`device_signed[${index}]: kept for workflow ${item.workflow_id}, not this export's`);
    const key = `${item.task_id}\u0000${item.message.tool}`;
    if (byTask.has(key)) problems.push(`device_signed[${index}]: a second ${item.message.tool} payload for task ${item.task_id}`);
    else byTask.set(key, { item, index });
  }
  return byTask;
}

/** When the deployment recorded each task's start and completion (their events' `at`), by task and tool. */
function recordedTimes(events: unknown): Map<string, number> {
  const times = new Map<string, number>();
  if (!Array.isArray(events)) return times;
  for (const event of events) {
    if (!isObject(event) || typeof event.task_id !== "string" || typeof event.at !== "string") continue;
    const tool: SignedTool | null = event.type === "task.started" ? "start_task" : event.type === "task.completed" ? "complete_task" : null;
    if (tool) times.set(`${event.task_id}\u0000${tool}`, Date.parse(event.at));
  }
  return times;
}

interface Context {
  workflowId: string;
  signers: readonly AllowedSigner[];
  payloads: Map<string, Parsed>;
  times: Map<string, number>;
}

/** One payload checked on its own and against the allowed signers; returns its signer, or pushes why not. */
async function checkPayload(
  ctx: Context,
  taskId: string,
  tool: SignedTool,
  where: string,
  problems: string[],
): Promise<{ parsed: Parsed; signer: AllowedSigner } | null> {
  const parsed = ctx.payloads.get(`${taskId}\u0000${tool}`);
  const what = tool === "start_task" ? "start snapshot" : "completion";
  if (!parsed) {
    problems.push(`${where}: labelled computed and signed, but the export carries no signed ${what} for the task (device_signed)`);
    return null;
  }
  const { item, index } = parsed;
  const at = `device_signed[${index}]`;
  const subject = tool === "start_task" ? ctx.workflowId : taskId;
  if (item.message.subject !== subject) {
    problems.push(`${at}: signed for ${item.message.subject}, not for ${subject}: moved from elsewhere`);
    return null;
  }
  const problem = await deviceSignedProblem(item);
  if (problem) {
    problems.push(`${at}: ${problem}`);
    return null;
  }
  const recorded = ctx.times.get(`${taskId}\u0000${tool}`);
  if (recorded === undefined || Number.isNaN(recorded)) {
    problems.push(`${at}: no event of the export records the task's ${what}`);
    return null;
  }
  if (Math.abs(recorded - item.message.signed_at) > DEVICE_SIGNATURE_SKEW_MS) {
    problems.push(
      `${at}: signed at ${new Date(item.message.signed_at).toISOString()}, more than ${DEVICE_SIGNATURE_SKEW_MS / 60_000} minutes from when the deployment recorded it (${new Date(recorded).toISOString()})`,
    );
    return null;
  }
  const verdict = allowedSigner(ctx.signers, item.message.key, recorded);
  if (!verdict.ok) {
    problems.push(`${at}: ${verdict.problem}`);
    return null;
  }
  return { parsed, signer: verdict.signer };
}

/** The data of a checked payload in the wire's shape, or why it is not. */
function startSnapshot(item: DeviceSigned, problems: string[], at: string): Snapshot | null {
  const parsed = isObject(item.data) ? snapshotSchema.safeParse(item.data.snapshot) : null;
  if (parsed?.success) return parsed.data;
  problems.push(`${at}.data.snapshot: not a snapshot the helper sends`);
  return null;
}

function completion(item: DeviceSigned, problems: string[], at: string): { changes: Changes; metrics: Metrics | null } | null {
  const data = isObject(item.data) ? item.data : {};
  const changes = changesSchema.safeParse(data.changes);
  const metrics = data.metrics === null ? null : metricsSchema.safeParse(data.metrics);
  if (changes.success && (metrics === null || metrics.success)) return { changes: changes.data, metrics: metrics?.data ?? null };
  problems.push(`${at}.data: not the changes and metrics the helper sends`);
  return null;
}

/**
 * What the edge's rule makes of the signed data for this task's files_changed (all but its
 * `source`), with the paths credited to a concurrent task that completed first (same change,
 * listed in verification.overlapping) left out as the edge leaves them.
 */
function signedFiles(snapshot: Snapshot, changes: Changes, task: JsonObject): JsonObject {
  const start: Snapshot = snapshot.type === "unavailable" ? { type: "checksum", files: 0, digest: "" } : snapshot;
  const net = computeNetChanges(start, changes);
  const exported = isObject(task.files_changed) ? task.files_changed : {};
  const listed = new Set(
    ["added", "modified", "deleted"].flatMap((list) => (Array.isArray(exported[list]) ? (exported[list] as Json[]) : [])),
  );
  const verification = isObject(task.verification) ? task.verification : {};
  const overlaps = Array.isArray(verification.overlapping) ? verification.overlapping : [];
  const creditedElsewhere = new Set(
    overlaps.filter((o) => isObject(o) && o.same_change === true && o.workflow_id === undefined).map((o) => (o as JsonObject).path),
  );
  const kept: PathChange[] = net.filter((change) => listed.has(change.path) || !creditedElsewhere.has(change.path));
  const files = summarizeChanges(kept, truncationOf(changes)) as unknown as JsonObject;
  const review = changes.type !== "unavailable" ? changes.review : undefined;
  const paths = kept.map((change) => change.path);
  if (review) Object.assign(files, reviewFields(review, new Set(paths), files.renamed as { from: string; to: string }[]));
  const edits = changes.type !== "unavailable" ? changes.agent_edits : undefined;
  if (edits && !edits.truncated) {
    const edited = new Set(edits.paths);
    files.not_by_agent_tools = paths.filter((path) => !edited.has(path));
  }
  return files;
}

/** The task's observed commands as the edge records them from the signed changes (null: none observed). */
function signedCommands(changes: Changes): Json {
  if (changes.type === "unavailable" || changes.source?.kind !== "helper" || !changes.commands) return null;
  const runs = changes.commands.runs.map((run, index) => ({ run, index }));
  runs.sort((a, b) => a.run.at - b.run.at || a.index - b.index);
  return {
    runs: runs.map(({ run }) => ({
      command: run.command,
      ...(run.truncated ? { truncated: true } : {}),
      at: new Date(run.at).toISOString(),
      exit_code: run.exit_code,
      duration_ms: run.duration_ms,
      kinds: run.kinds,
    })),
    omitted: changes.commands.omitted ?? 0,
    last_edit_at: changes.commands.last_edit_at === null ? null : new Date(changes.commands.last_edit_at).toISOString(),
  };
}

/** Earlier tasks' lines as the edge records them from the signed changes (null: none reported). */
function signedDurability(changes: Changes): Json {
  if (changes.type === "unavailable" || changes.source?.kind !== "helper" || !changes.durability?.length) return null;
  return changes.durability.map((seen) => ({ ...seen, at: new Date(seen.at).toISOString() }));
}

/** The repository fields the start snapshot and the completion give (git only). */
function signedRepository(snapshot: Snapshot, changes: Changes): JsonObject | null {
  if (snapshot.type !== "git" || !snapshot.repository) return null;
  return {
    fingerprint: snapshot.repository.fingerprint,
    remote: snapshot.repository.remote,
    branch: snapshot.repository.branch,
    start_commit: snapshot.head,
    end_commit: changes.type === "git" ? changes.head : null,
    dirty_at_start: snapshot.dirty.length + (snapshot.dirty_omitted ?? 0),
  };
}

function principalText(signer: AllowedSigner): string {
  return `allowed signer ${signer.principal}`;
}

/** A task's files: labelled signed, checked here when signers are given. Returns its label. */
async function checkFiles(ctx: Context | null, task: JsonObject, path: string, problems: string[]): Promise<string> {
  const files = isObject(task.files_changed) ? task.files_changed : null;
  const source = isObject(files?.source) ? (files.source as unknown as FilesSource) : null;
  if (!source) return "not recorded";
  if (source.kind !== "signed") return PROVENANCE_TERMS[filesKind(source)];
  const claimed = `${PROVENANCE_TERMS.signed} on ${deviceText(source.device)}`;
  if (!ctx) return `${claimed} per the server: NOT CHECKED`;
  const id = String(task.id);
  const found: string[] = [];
  const start = await checkPayload(ctx, id, "start_task", `${path}.files_changed`, found);
  const end = await checkPayload(ctx, id, "complete_task", `${path}.files_changed`, found);
  if (start && end) {
    const [s, e] = [start.parsed.item, end.parsed.item];
    if (e.message.key !== s.message.key) found.push(`${path}.files_changed: its start and its completion were signed by different devices`);
    else if (e.message.start_nonce !== s.message.nonce)
      found.push(`device_signed[${end.parsed.index}]: names start ${e.message.start_nonce ?? "none"}, not this task's signed start`);
    else if (source.device.fingerprint !== e.fingerprint) {
      found.push(`${path}.files_changed.source.device: says ${source.device.fingerprint}, the payloads were signed by ${e.fingerprint}`);
    } else {
      const snapshot = startSnapshot(s, found, `device_signed[${start.parsed.index}]`);
      const done = completion(e, found, `device_signed[${end.parsed.index}]`);
      if (snapshot && done) compareFiles(snapshot, done.changes, task, path, found);
    }
  }
  problems.push(...found);
  return found.length === 0 && end ? `${claimed}: checked, ${principalText(end.signer)}` : `${claimed} per the server: REFUSED (see below)`;
}

function compareFiles(snapshot: Snapshot, changes: Changes, task: JsonObject, path: string, found: string[]): void {
  let expected: JsonObject;
  try {
    expected = signedFiles(snapshot, changes, task);
  } catch (error) {
    if (!(error instanceof ChangesMismatchError)) throw error;
    found.push(`${path}.files_changed: the signed start and end cannot be compared (${error.message})`);
    return;
  }
  const { source: _source, more: _more, ...exported } = isObject(task.files_changed) ? task.files_changed : {};
  diffValues(`${path}.files_changed`, exported, expected, found, SIGNED);
  diffValues(`${path}.commands`, task.commands ?? null, signedCommands(changes), found, SIGNED);
  diffValues(`${path}.durability`, task.durability ?? null, signedDurability(changes), found, SIGNED);
  const repository = signedRepository(snapshot, changes);
  const recorded = isObject(task.repository) ? task.repository : null;
  if (repository) {
    for (const [key, value] of Object.entries(repository)) diffValues(`${path}.repository.${key}`, recorded?.[key], value, found, SIGNED);
  }
}

/** A task's usage: labelled signed when it names a device; checked here when signers are given. Returns its label. */
async function checkUsage(ctx: Context | null, task: JsonObject, path: string, problems: string[]): Promise<string | null> {
  const metrics = isObject(task.metrics) ? task.metrics : null;
  if (!metrics) return null;
  if (typeof metrics.source !== "string") return "not recorded";
  const device = isObject(metrics.device) ? metrics.device : null;
  if (metrics.source !== "transcript" || !device || typeof device.name !== "string" || typeof device.fingerprint !== "string") {
    return PROVENANCE_TERMS.claimed;
  }
  const claimed = `${PROVENANCE_TERMS.signed} on ${deviceText({ name: device.name, fingerprint: device.fingerprint })}`;
  if (!ctx) return `${claimed} per the server: NOT CHECKED`;
  const found: string[] = [];
  const end = await checkPayload(ctx, String(task.id), "complete_task", `${path}.metrics`, found);
  if (end) {
    const done = completion(end.parsed.item, found, `device_signed[${end.parsed.index}]`);
    if (device.fingerprint !== end.parsed.item.fingerprint) {
      found.push(`${path}.metrics.device: says ${String(device.fingerprint)}, the completion was signed by ${end.parsed.item.fingerprint}`);
    } else if (done) {
      const signed = done.metrics;
      if (signed?.source !== "transcript") found.push(`${path}.metrics.source: the device signed usage it did not sum from the transcript`);
      const figures: JsonObject = {
        input_tokens: signed?.input_tokens ?? null,
        output_tokens: signed?.output_tokens ?? null,
        model: signed?.model ?? null,
        cost_usd: signed?.cost_usd ?? null,
        price_table_date: signed?.price_table_date ?? null,
      };
      for (const [key, value] of Object.entries(figures)) diffValues(`${path}.metrics.${key}`, metrics[key] ?? null, value, found, SIGNED);
    }
  }
  problems.push(...found);
  return found.length === 0 && end ? `${claimed}: checked, ${principalText(end.signer)}` : `${claimed} per the server: REFUSED (see below)`;
}

/**
 * Checks every figure the export labels computed and signed. `signers`: the allowed signers (null:
 * none given, so nothing labelled signed is checked). Problems are pushed onto `problems`.
 */
export async function checkDeviceEvidence(
  document: JsonObject,
  workflowId: string,
  signers: readonly AllowedSigner[] | null,
  problems: string[],
): Promise<DeviceEvidence> {
  const payloads = payloadsOf(document, workflowId, problems);
  const ctx: Context | null = signers ? { workflowId, signers, payloads, times: recordedTimes(document.events) } : null;
  const evidence: DeviceEvidence = { status: "none", files: {}, usage: {}, payloads: payloads.size };
  const tasks = Array.isArray(document.tasks) ? document.tasks : [];
  let labelled = false;
  for (const task of tasks) {
    if (!isObject(task) || typeof task.id !== "string") continue;
    const path = `tasks[${task.id}]`;
    const files = await checkFiles(ctx, task, path, problems);
    if (isObject(task.files_changed)) evidence.files[files] = (evidence.files[files] ?? 0) + 1;
    const usage = await checkUsage(ctx, task, path, problems);
    if (usage !== null) evidence.usage[usage] = (evidence.usage[usage] ?? 0) + 1;
    labelled ||= files.startsWith(PROVENANCE_TERMS.signed) || (usage?.startsWith(PROVENANCE_TERMS.signed) ?? false);
  }
  if (labelled) evidence.status = ctx ? "checked" : "not_checked";
  return evidence;
}
