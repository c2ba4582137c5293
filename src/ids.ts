/**
 * Identifiers. A workflow id carries 100 random bits; a task id embeds its
 * workflow's random part, so a task routes to its Durable Object with no lookup.
 *   workflow: wf_<20 base32>        task: tk_<same 20>_<8 base32>
 */
const ALPHABET = "abcdefghijklmnopqrstuvwxyz234567";
const WORKFLOW_ID = /^wf_([a-z2-7]{20})$/;
const TASK_ID = /^tk_([a-z2-7]{20})_[a-z2-7]{8}$/;

function base32(bytes: Uint8Array, length: number): string {
  let out = "";
  for (let i = 0; i < length; i++) out += ALPHABET[(bytes[i] ?? 0) & 31];
  return out;
}

export function randomToken(length: number): string {
  return base32(crypto.getRandomValues(new Uint8Array(length)), length);
}

export function newWorkflowId(): string {
  return `wf_${randomToken(20)}`;
}

/** Same account + same idempotency key → same workflow id, so a retried start_workflow lands on the same object. */
export async function workflowIdForKey(account: string, idempotencyKey: string): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(`${account}\n${idempotencyKey}`));
  return `wf_${base32(new Uint8Array(digest), 20)}`;
}

export function newTaskId(workflowId: string): string {
  return `tk_${workflowId.slice(3)}_${randomToken(8)}`;
}

export function isWorkflowId(value: string): boolean {
  return WORKFLOW_ID.test(value);
}

/** The workflow a task id belongs to, or null when the id is not a task id at all. */
export function workflowOfTask(taskId: string): string | null {
  const match = TASK_ID.exec(taskId);
  return match ? `wf_${match[1]}` : null;
}

export function newRowId(prefix: string): string {
  return `${prefix}_${randomToken(12)}`;
}

/** The alphabet in the order SQLite compares text (digits before letters): what "later" means for an id. */
const SORTED = [...ALPHABET].sort().join("");

/**
 * A row id that sorts after `previous` (an id of the same form): `previous` plus one in the order ids
 * are compared. Log entries are kept in (time, id) order, so two written in the same millisecond
 * read back in the order they were written rather than in their random ids' order.
 */
export function rowIdAfter(previous: string): string {
  const cut = previous.lastIndexOf("_") + 1;
  const digits = [...previous.slice(cut)];
  for (let i = digits.length - 1; i >= 0; i--) {
    const place = SORTED.indexOf(digits[i] ?? "");
    if (place < SORTED.length - 1) {
      digits[i] = SORTED[place + 1] ?? "";
      return previous.slice(0, cut) + digits.join("");
    }
    digits[i] = SORTED[0] ?? "";
  }
  // Every place at its last letter (one id in 32^12): nothing of this form sorts after it.
  return previous.slice(0, cut) + digits.join("");
}
