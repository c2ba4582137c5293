/**
 * @module pages/client/live
 * The live page script (built by scripts/page-scripts.mjs, inlined with the response's CSP
 * nonce). It renders nothing itself: the server's renderer (pages/page.ts) is the only one. The
 * workflow object's WebSocket says that events happened (seq numbers); the script then fetches
 * the page's blocks rendered now (`<base>/blocks`, with the seq they show in `Waymark-Seq`) and
 * swaps in the elements whose markup changed, matched by id. Hence:
 *  - the page after any number of events is the page a fresh load would show;
 *  - nothing is missed or shown twice: each swap shows one whole state, and the socket
 *    reconnects (exponential backoff) from the seq of the state on screen;
 *  - one blocks request is in flight at a time, and after a slow one (100 ms or more: a large
 *    workflow) the next waits twice as long as it took; events arriving meanwhile are coalesced,
 *    and a paged catch-up ({"type":"more"} → {"after": n}) is swapped in once, at its end;
 *  - a shared page stays within the fetches its root names (`data-fetch-budget="n/ms"`: at most
 *    n in any ms), a part of the reader's read budget, so following a busy agent never spends
 *    what the reader needs to reload or open a task's files (a long burst of events shows every
 *    ms·2/n instead); a 429 all the same (the link's budget, or the reader's other tabs) waits
 *    the Retry-After it names;
 *  - close code 4410 (or 4401 on the owner view: signed out), or a 404/410 for the blocks, means
 *    the link is no longer valid: the workflow's content is removed from the page.
 * Markup comes only from the server, which escaped every agent-written value; it is parsed in
 * an inert <template> (scripts there never run, and the CSP allows none).
 *
 * It also makes the page read well for everyone: keyboard focus stays on the element it was on
 * (or the same element re-rendered) across a swap; what a swap added (tasks, milestones,
 * decisions, issues, feedback, a completion) is said politely in the page's live region; times
 * are shown in the viewer's time zone, before a swap so unchanged blocks stay equal; tasks the
 * viewer opened or closed stay so across swaps; the task a link points to is opened; the live
 * indicator shows only while the workflow is active; printing opens every task.
 */
import { localizeTimes } from "./local-time";
import { type LiveHooks, startReviews } from "./review";

const root = document.getElementById("wm");
const initialBlocks = document.getElementById("wf-blocks");
if (root && initialBlocks) startLive(root, initialBlocks);

/** What can hold keyboard focus inside the blocks, in document order. */
const FOCUSABLE = "a[href], button, summary, input, select, textarea, [tabindex]";
/** Announcements per swap; the rest are counted. */
const ANNOUNCED = 3;

interface FocusPlace {
  /** The id of the focused element, or of its nearest ancestor with one. */
  id: string;
  /** Its index among that ancestor's focusable descendants (-1: the element itself has the id). */
  index: number;
}

function startLive(root: HTMLElement, initial: HTMLElement): void {
  let blocks = initial;
  const base = root.dataset.base ?? "";
  // The timeline page this view shows (`?after=<cursor>`): its blocks are fetched the same way.
  const query = root.dataset.query ?? "";
  let shownSeq = Number(root.dataset.seq);
  let knownSeq = shownSeq;
  let socket: WebSocket | null = null;
  let attempt = 0;
  let fetching = false;
  let catchingUp = true;
  let stopped = false;
  const liveBadge = document.getElementById("live");
  const announcer = document.getElementById("wf-announce");
  // The owner view (data-audience="owner") loses its feed when the session ends, not a link.
  const owner = root.dataset.audience === "owner";

  // Only an active workflow is "live"; a finished one says "completed" in its header.
  function showLiveBadge(): void {
    const header = document.getElementById("wf-header");
    if (liveBadge) liveBadge.hidden = Boolean(header && header.dataset.status !== "active");
  }

  function setState(state: string, label: string): void {
    root.dataset.state = state;
    if (liveBadge) {
      liveBadge.textContent = label;
      liveBadge.className = `live ${state === "live" ? "on" : "off"}`;
    }
    showLiveBadge();
  }

  function announce(lines: string[]): void {
    if (!announcer || lines.length === 0) return;
    const shown = lines.slice(0, ANNOUNCED);
    if (lines.length > ANNOUNCED) shown.push(`and ${lines.length - ANNOUNCED} more updates`);
    announcer.textContent = shown.join(". ");
  }

  // Tasks the viewer opened or closed, by task id (a task's card is the first child of its item):
  // swaps bring the server's default back, this restores the viewer's choice.
  const chosen = new Map<string, boolean>();
  // Other sections the viewer opened or closed that have ids of their own (the approved review items), by id.
  const chosenSections = new Map<string, boolean>();
  document.addEventListener("click", (e) => {
    const summary = e.target instanceof Element ? e.target.closest("summary") : null;
    const details = summary?.parentElement;
    const item = details?.parentElement;
    if (details instanceof HTMLDetailsElement && details.id && !details.classList.contains("rv") && summary === details.firstElementChild)
      chosenSections.set(details.id, !details.open);
    else if (details?.tagName === "DETAILS" && item?.id && summary === details.firstElementChild)
      chosen.set(item.id, !(details as HTMLDetailsElement).open);
  });
  function cardOf(id: string): HTMLDetailsElement | null {
    const card = document.getElementById(id)?.firstElementChild;
    return card instanceof HTMLDetailsElement ? card : null;
  }
  function restoreChosen(): void {
    chosen.forEach((open, id) => {
      const card = cardOf(id);
      if (card && card.open !== open) card.open = open;
    });
    chosenSections.forEach((open, id) => {
      const section = document.getElementById(id);
      if (section instanceof HTMLDetailsElement && section.open !== open) section.open = open;
    });
  }
  /** Opens a section with an id of its own and keeps it open across swaps (the page script's own choice). */
  function keepOpen(section: HTMLDetailsElement): void {
    section.open = true;
    if (section.id && !section.classList.contains("rv")) chosenSections.set(section.id, true);
  }

  // A link to a task, decision or issue inside closed tasks opens them.
  function revealTarget(): void {
    let id = location.hash.slice(1);
    try {
      id = decodeURIComponent(id);
    } catch {
      // A malformed escape: look the id up as written.
    }
    for (let node = id ? document.getElementById(id) : null; node; node = node.parentElement) {
      if (node instanceof HTMLDetailsElement && !node.open) {
        node.open = true;
        if (node.parentElement?.id) chosen.set(node.parentElement.id, true);
      }
    }
  }
  window.addEventListener("hashchange", revealTarget);

  // Printing shows every task; closed ones close again afterwards.
  let printed: HTMLDetailsElement[] = [];
  window.addEventListener("beforeprint", () => {
    printed = Array.from(document.querySelectorAll<HTMLDetailsElement>("details:not([open])"));
    for (const d of printed) d.open = true;
  });
  window.addEventListener("afterprint", () => {
    for (const d of printed) d.open = false;
    printed = [];
  });

  function gone(): void {
    stopped = true;
    if (socket) {
      try {
        socket.close();
      } catch {
        // Already closing.
      }
    }
    setState("gone", owner ? "signed out" : "not shared");
    const box = document.createElement("div");
    box.className = "gone";
    const title = document.createElement("h1");
    title.textContent = owner ? "You are signed out" : "This workflow is no longer shared";
    const text = document.createElement("p");
    text.textContent = owner
      ? "Your session ended. Sign in again to follow this workflow."
      : "The link was revoked, has expired or never existed. Ask the owner for a new link.";
    box.append(title, text);
    root.replaceChildren(box, ...(announcer ? [announcer] : []));
    announce([title.textContent]);
  }

  // Lists whose items all have ids (whitespace between them aside) are reconciled item by item.
  function keyedChildren(node: Element): boolean {
    return (
      node.children.length > 0 &&
      Array.from(node.childNodes).every((c) =>
        c instanceof Element ? Boolean(c.id) : c.nodeType === Node.TEXT_NODE && !c.textContent?.trim(),
      )
    );
  }

  // Brings "current" to "next" (same id), keeping unchanged subtrees as they are (open <details>, selection, focus).
  function morph(current: Element, next: Element): void {
    if (current.isEqualNode(next)) return;
    if (current.tagName !== next.tagName || !keyedChildren(next) || !(current.children.length === 0 || keyedChildren(current))) {
      current.replaceWith(next);
      return;
    }
    for (const a of Array.from(current.attributes)) if (!next.hasAttribute(a.name)) current.removeAttribute(a.name);
    for (const a of Array.from(next.attributes)) current.setAttribute(a.name, a.value);
    const byId = new Map<string, Element>();
    for (const c of Array.from(current.children)) byId.set(c.id, c);
    Array.from(next.children).forEach((n, i) => {
      const old = byId.get(n.id);
      byId.delete(n.id);
      const at = current.children[i] ?? null;
      if (old) {
        if (old !== at) current.insertBefore(old, at);
        morph(old, n);
      } else current.insertBefore(n, at);
    });
    for (const old of byId.values()) old.remove();
  }

  function focusPlace(): FocusPlace | null {
    const active = document.activeElement;
    if (!active || !blocks.contains(active) || active === blocks) return null;
    if (active.id) return { id: active.id, index: -1 };
    const holder = active.parentElement?.closest("[id]");
    if (!holder) return null;
    return { id: holder.id, index: Array.from(holder.querySelectorAll(FOCUSABLE)).indexOf(active) };
  }

  // Focus fell to <body> when its element was replaced: put it on the same element re-rendered.
  function restoreFocus(place: FocusPlace | null): void {
    if (!place || (document.activeElement && document.activeElement !== document.body)) return;
    const holder = document.getElementById(place.id);
    const target = place.index < 0 ? holder : holder?.querySelectorAll(FOCUSABLE)[place.index];
    if (target instanceof HTMLElement) target.focus({ preventScroll: true });
  }

  /** What the viewer is told a swap changed: items that were not on the page before, and completions. */
  function describeChanges(before: Map<string, string>, headerBefore: string | undefined): string[] {
    const lines: string[] = [];
    const headerNow = document.getElementById("wf-header")?.dataset.status;
    for (const item of blocks.querySelectorAll<HTMLElement>("li.task[id], li.item[id], li.feedback[id]")) {
      const what = item.querySelector(".what")?.textContent?.trim() ?? "";
      const status = item.dataset.status ?? "";
      const previous = before.get(item.id);
      if (previous === undefined) {
        if (item.classList.contains("task")) lines.push(`New task: ${what}`);
        else if (item.classList.contains("feedback")) lines.push(`New feedback: ${item.querySelector("p")?.textContent?.trim() ?? ""}`);
        else lines.push(`New ${item.querySelector(".kind")?.textContent ?? "entry"}: ${what}`);
      } else if (item.classList.contains("task") && previous === "in_progress" && status !== "in_progress") {
        lines.push(`Task ${what} finished: ${item.querySelector(".badge")?.textContent?.trim() ?? status}`);
      }
    }
    if (headerBefore === "active" && headerNow && headerNow !== "active") {
      lines.push(`Workflow completed: ${document.querySelector("#wf-header .badge")?.textContent?.trim() ?? headerNow}`);
    }
    return lines;
  }

  function itemStates(): Map<string, string> {
    const states = new Map<string, string>();
    for (const item of blocks.querySelectorAll<HTMLElement>("li.task[id], li.item[id], li.feedback[id]"))
      states.set(item.id, item.dataset.status ?? "");
    return states;
  }

  // Reviewing in place (client/review.ts): forms set aside around a swap, and refreshes it waits for.
  const hooks: LiveHooks = { refreshNow, beforeSwap: [], afterSwap: [], announce, keepOpen };
  let waiters: { seq: number; resolve: () => void }[] = [];
  function settleWaiters(): void {
    const done = waiters.filter((w) => shownSeq >= w.seq);
    waiters = waiters.filter((w) => !done.includes(w));
    for (const w of done) w.resolve();
  }
  /**
   * Fetches the blocks now (a write of the viewer's own just landed); resolves once a later state is
   * on the page (a failed fetch is tried again, as for any event), or after 10 s whatever happened.
   */
  function refreshNow(): Promise<void> {
    return new Promise((resolve) => {
      const waiter = { seq: shownSeq + 1, resolve };
      waiters.push(waiter);
      setTimeout(() => {
        waiters = waiters.filter((w) => w !== waiter);
        resolve();
      }, 10_000);
      knownSeq = Math.max(knownSeq, shownSeq + 1);
      nextFetchAt = 0;
      refresh();
    });
  }

  function swap(markup: string, seq: number): void {
    for (const hook of hooks.beforeSwap) hook();
    const before = itemStates();
    const headerBefore = document.getElementById("wf-header")?.dataset.status;
    const place = focusPlace();
    const template = document.createElement("template");
    template.innerHTML = markup;
    localizeTimes(template.content);
    const next = document.createElement("div");
    next.id = "wf-blocks";
    // The skip link's target: it takes focus, never a place in the Tab order.
    next.tabIndex = -1;
    next.append(template.content);
    morph(blocks, next);
    blocks = document.getElementById("wf-blocks") ?? blocks;
    restoreChosen();
    restoreFocus(place);
    for (const hook of hooks.afterSwap) hook();
    showLiveBadge();
    const name = blocks.querySelector(".wf-name");
    if (name) document.title = `${name.textContent} — Waymark`;
    // The first swap after loading shows what happened since the HTML: said like any other.
    announce(describeChanges(before, headerBefore));
    shownSeq = Math.max(shownSeq, seq);
    root.dataset.seq = String(shownSeq);
    settleWaiters();
  }

  // The blocks cost the server in proportion to what one page shows: after a fetch that took
  // 100 ms or more, the next waits twice as long, so a busy workflow never keeps a viewer's
  // fetches back to back. Events that arrive during a fetch of a small page are fetched 50 ms
  // after it; an event after a pause, at once.
  let nextFetchAt = 0;
  let waiting = false;
  // A shared page's own budget (`data-fetch-budget="n/ms"`: at most n fetches in any ms) as a
  // token bucket: half of it at once (the first events of a burst show without delay), the other
  // half refilled over the window; so no window, however placed, holds more than n fetches.
  const [budgetCount, budgetWindow] = (root.dataset.fetchBudget ?? "").split("/").map(Number);
  const bucket =
    budgetCount && budgetWindow
      ? { size: budgetCount / 2, perMs: budgetCount / 2 / budgetWindow, tokens: budgetCount / 2, at: Date.now() }
      : null;
  /** When the budget allows the next fetch (`now` when it does already). */
  function budgetAllowsAt(now: number): number {
    if (!bucket) return now;
    bucket.tokens = Math.min(bucket.size, bucket.tokens + (now - bucket.at) * bucket.perMs);
    bucket.at = now;
    return bucket.tokens >= 1 ? now : now + Math.ceil((1 - bucket.tokens) / bucket.perMs);
  }
  function refresh(): void {
    if (fetching || waiting || stopped || knownSeq <= shownSeq) return;
    const now = Date.now();
    const wait = Math.max(nextFetchAt, budgetAllowsAt(now)) - now;
    if (wait > 0) {
      waiting = true;
      setTimeout(() => {
        waiting = false;
        refresh();
      }, wait);
      return;
    }
    fetching = true;
    const started = Date.now();
    if (bucket) bucket.tokens -= 1;
    let retryAfter = 0;
    fetch(`${base}/blocks${query}`, { cache: "no-store" })
      .then(async (r) => {
        if (r.status === 404 || r.status === 410) return gone();
        if (r.status === 429) retryAfter = Number(r.headers.get("Retry-After")) || 10;
        if (!r.ok) throw new Error(`status ${r.status}`);
        const seq = Number(r.headers.get("Waymark-Seq"));
        const markup = await r.text();
        swap(markup, seq);
        knownSeq = Math.max(knownSeq, seq);
      })
      .catch(() => {})
      .then(() => {
        fetching = false;
        const now = Date.now();
        const took = now - started;
        nextFetchAt = retryAfter > 0 ? now + retryAfter * 1000 : took >= 100 ? now + 2 * took : now;
        if (knownSeq > shownSeq) setTimeout(refresh, 50);
      });
  }

  function onMessage(message: MessageEvent): void {
    let msg: { type?: string; seq?: number; event?: { seq?: unknown } };
    try {
      msg = JSON.parse(String(message.data));
    } catch {
      return;
    }
    if (msg.type === "event" && typeof msg.event?.seq === "number") {
      knownSeq = Math.max(knownSeq, msg.event.seq);
      // While catching up, one swap at the end shows it all.
      if (!catchingUp) refresh();
    } else if (msg.type === "more") {
      // Catch-up comes in pages: ask for the next one.
      if (socket && socket.readyState === WebSocket.OPEN) socket.send(JSON.stringify({ after: msg.seq }));
    } else if (msg.type === "caught_up") {
      catchingUp = false;
      attempt = 0;
      setState("live", "live");
      refresh();
    }
  }

  function connect(): void {
    if (stopped) return;
    let opened = false;
    catchingUp = true;
    const ws = new WebSocket(`${location.protocol === "https:" ? "wss://" : "ws://"}${location.host}${base}/ws?after=${shownSeq}`);
    socket = ws;
    ws.onopen = () => {
      opened = true;
    };
    ws.onmessage = onMessage;
    ws.onclose = (e) => {
      if (socket !== ws) return;
      socket = null;
      if (e.code === 4410 || e.code === 4401) return gone();
      setState("reconnecting", "reconnecting…");
      // A refused upgrade looks like any network failure: ask the server whether the link still works.
      const check = opened
        ? Promise.resolve(true)
        : fetch(`${base}/blocks${query}`, { method: "HEAD", cache: "no-store" }).then(
            (r) => !(r.status === 404 || r.status === 410),
            () => true,
          );
      check.then((valid) => {
        if (!valid) return gone();
        const delay = Math.min(10000, 250 * 2 ** attempt++) * (0.75 + Math.random() * 0.5);
        setTimeout(connect, delay);
      });
    };
  }

  // A small handle for people debugging (and for the browser tests): the seq on screen and a way to drop the socket.
  (window as Window & { waymarkLive?: unknown }).waymarkLive = {
    get seq() {
      return shownSeq;
    },
    get state() {
      return root.dataset.state;
    },
    disconnect: () => socket?.close(),
  };
  if (owner) startReviews(hooks);
  localizeTimes(document);
  revealTarget();
  setState("connecting", "connecting…");
  connect();
}
