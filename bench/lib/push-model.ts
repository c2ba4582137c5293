/**
 * How many account pushes a workflow's writes should cause, by the outbox's rules
 * (src/workflow/account-outbox.ts, restated here: the bench runs in Node and does not load the
 * Worker's sources): a workflow's start and completion are pushed before the reply; a milestone
 * rides on the next push (or the alarm's within 60 s); every other write is pushed right after
 * its reply unless a push started less than 2 s before or is under way, and then by the alarm at
 * the end of that window. Fed with one agent's replies in order (their times stand for the
 * writes' commits) and how long a push waits on the account object, it counts the pushes; the
 * team load compares the sum with the account object's metered recordWorkflow calls.
 *
 * `loop`: whether a push that ends with events committed during it pushes again at once (the
 * outbox's loop before the window rule covered such events) or leaves them to the window's alarm.
 */

/** ACCOUNT_PUSH_DELAY_MS and ACCOUNT_LAZY_PUSH_MS of src/workflow/account-outbox.ts. */
const WINDOW_MS = 2_000;
const LAZY_MS = 60_000;

/** How soon the index must see a tool's write (the outbox's pushUrgency of the events each tool writes). */
function urgencyOf(tool: string): "before_reply" | "batched" | "lazy" {
  if (tool === "start_workflow" || tool === "complete_workflow") return "before_reply";
  return tool === "log_milestone" ? "lazy" : "batched";
}

export interface Reply {
  tool: string;
  /** When the agent had the reply, ms on the run's clock. */
  at: number;
}

/** Pushes one workflow's replies should cause; `pushMs` is how long one push waits on the account. */
export function expectedPushes(replies: readonly Reply[], pushMs: number, loop: boolean): number {
  let pushes = 0;
  let lastPush = Number.NEGATIVE_INFINITY;
  let flightEnds = Number.NEGATIVE_INFINITY;
  let alarmAt = 0;
  let pending = false;
  let committedInFlight = false;
  const push = (t: number) => {
    pushes++;
    lastPush = t;
    flightEnds = t + pushMs;
    pending = false;
    committedInFlight = false;
  };
  // What happens before `t`: a push that ends with events committed meanwhile pushes again (`loop`), a due alarm pushes what is pending.
  const advance = (t: number) => {
    for (;;) {
      const loopAt = loop && committedInFlight && pending ? flightEnds : Number.POSITIVE_INFINITY;
      const alarm = alarmAt > 0 ? alarmAt : Number.POSITIVE_INFINITY;
      const next = Math.min(loopAt, alarm);
      // Nothing left to happen (t is infinite at the end of the replies) or nothing before t.
      if (next === Number.POSITIVE_INFINITY || next > t) return;
      if (next === alarm) {
        alarmAt = 0;
        if (pending) push(Math.max(alarm, flightEnds));
      } else push(loopAt);
    }
  };
  for (const { tool, at } of replies) {
    advance(at);
    pending = true;
    if (at < flightEnds) committedInFlight = true;
    const urgency = urgencyOf(tool);
    if (urgency === "before_reply") push(Math.max(at, flightEnds));
    else if (urgency === "lazy") {
      if (!(alarmAt > at)) alarmAt = at + LAZY_MS;
    } else {
      const windowEnds = lastPush + WINDOW_MS;
      if (at >= flightEnds && at >= windowEnds) push(at);
      else {
        const due = Math.max(windowEnds, at);
        if (!(alarmAt > at && alarmAt <= due)) alarmAt = due;
      }
    }
  }
  advance(Number.POSITIVE_INFINITY);
  return pushes;
}
