/**
 * @module pages/client/review
 * Reviewing in place on the owner view (part of the live page script, client/live.ts). Every
 * review form works without script: a review item's own form posts and the page comes back, and
 * an item's Review link leads to the feedback form at the bottom with the item chosen. With
 * script:
 *  - a Review link opens the form right there (a copy of the page's `#rv-template`, filled in
 *    with what the link is about: `data-review`, and `data-path` for a file), its message box
 *    focused; Escape or Cancel closes it and gives focus back to the link;
 *  - a review form is sent in the background (`Accept: application/json`, so the route answers
 *    with the recorded item instead of a redirect), the page's blocks are fetched again through
 *    the live machinery, and the reviewer is told what was recorded (in the form's status while it
 *    is sent, then in the page's live region) with focus on the item reviewed; a refusal is said
 *    in the form, which keeps what was typed;
 *  - a live update never takes a form away while it is open: open forms are set aside before
 *    the blocks are swapped and put back next to their item after (with their text and focus).
 * Nothing here renders what the server sent as markup: only the JSON's fields are read as text.
 */

/** What client/live.ts lends this module. */
export interface LiveHooks {
  /** Fetches the blocks now; resolves once they are on the page. */
  refreshNow(): Promise<void>;
  /** Called around every swap of the blocks. */
  beforeSwap: (() => void)[];
  afterSwap: (() => void)[];
  announce(lines: string[]): void;
  /** Opens a section (<details> with an id) and keeps it open across later swaps. */
  keepOpen(section: HTMLDetailsElement): void;
}

const VERDICT_SAID: Record<string, string> = {
  approved: "Approval recorded",
  changes_requested: "Request for changes recorded",
  comment: "Comment recorded",
};

interface Recorded {
  id?: string;
  verdict?: string;
  requested_verdict?: string;
  message?: string;
}

/** An open form set aside during a swap, and where it goes back. */
interface SetAside {
  form: HTMLElement;
  /** A review item's own form (<details>) by id, or an opened form by the link it belongs to. */
  detailsId: string | null;
  linkKey: string | null;
  focused: Element | null;
}

const linkKeyOf = (link: Element) => `${link.getAttribute("data-review") ?? ""}\u0000${link.getAttribute("data-path") ?? ""}`;

function findLink(key: string): HTMLElement | null {
  for (const link of document.querySelectorAll<HTMLElement>("a[data-review]")) if (linkKeyOf(link) === key) return link;
  return null;
}

export function startReviews(hooks: LiveHooks): void {
  const found = document.getElementById("rv-template");
  if (!(found instanceof HTMLTemplateElement)) return;
  const template: HTMLTemplateElement = found;
  let setAside: SetAside[] = [];

  function openForm(link: HTMLAnchorElement): void {
    const key = linkKeyOf(link);
    const open = link.nextElementSibling;
    if (open instanceof HTMLFormElement && open.dataset.for === key) {
      open.querySelector("textarea")?.focus();
      return;
    }
    const form = template.content.firstElementChild?.cloneNode(true);
    if (!(form instanceof HTMLFormElement)) return;
    form.dataset.for = key;
    form.setAttribute("aria-label", link.textContent?.trim() ?? "Review");
    const target = form.querySelector<HTMLInputElement>('input[name="target"]');
    const path = form.querySelector<HTMLInputElement>('input[name="path"]');
    if (target) target.value = link.dataset.review ?? "";
    if (path) path.value = link.dataset.path ?? "";
    link.after(form);
    form.querySelector("textarea")?.focus();
  }

  function closeForm(form: HTMLFormElement): void {
    const link = findLink(form.dataset.for ?? "");
    form.remove();
    link?.focus();
  }

  document.addEventListener("click", (event) => {
    const element = event.target instanceof Element ? event.target : null;
    const link = element?.closest("a[data-review]");
    if (link instanceof HTMLAnchorElement && !(event.ctrlKey || event.metaKey || event.shiftKey)) {
      event.preventDefault();
      openForm(link);
      return;
    }
    const cancel = element?.closest(".rv-cancel");
    const form = cancel?.closest("form");
    if (form instanceof HTMLFormElement) closeForm(form);
  });

  document.addEventListener("keydown", (event) => {
    if (event.key !== "Escape") return;
    const form = event.target instanceof Element ? event.target.closest("form.rv-inline") : null;
    if (form instanceof HTMLFormElement) closeForm(form);
  });

  document.addEventListener("submit", (event) => {
    const form = event.target;
    if (!(form instanceof HTMLFormElement) || !form.classList.contains("rv-form")) return;
    event.preventDefault();
    const submitter = event.submitter instanceof HTMLButtonElement ? event.submitter : null;
    void send(form, submitter);
  });

  async function send(form: HTMLFormElement, submitter: HTMLButtonElement | null): Promise<void> {
    const status = form.querySelector<HTMLElement>(".rv-status");
    const say = (text: string, failed = false) => {
      if (!status) return;
      status.textContent = text;
      status.classList.toggle("fail", failed);
    };
    const data = new FormData(form, submitter);
    const target = String(data.get("target") ?? "");
    const id = target.slice(target.indexOf(":") + 1);
    const buttons = form.querySelectorAll("button");
    for (const button of buttons) button.disabled = true;
    say("Sending…");
    let recorded: Recorded = {};
    let ok = false;
    try {
      const response = await fetch(form.action, {
        method: "POST",
        body: new URLSearchParams(data as unknown as Record<string, string>),
        headers: { Accept: "application/json" },
        credentials: "same-origin",
        redirect: "error",
      });
      ok = response.ok;
      const text = await response.text();
      try {
        recorded = JSON.parse(text) as Recorded;
      } catch {
        recorded = { message: text };
      }
    } catch {
      recorded = { message: "Not sent: the connection failed. Try again." };
    }
    for (const button of buttons) button.disabled = false;
    if (!ok) {
      say(recorded.message ?? "Not recorded.", true);
      form.querySelector("textarea")?.focus();
      return;
    }
    const said = recorded.requested_verdict
      ? `${VERDICT_SAID[recorded.requested_verdict]?.replace(" recorded", "") ?? "Verdict"} recorded as a comment: the server cannot tell you from the agent with this sign-in.`
      : `${VERDICT_SAID[recorded.verdict ?? ""] ?? "Recorded"}.`;
    say(said);
    // The item's block comes back from the server without this form.
    form.closest("details.rv")?.removeAttribute("open");
    if (form.classList.contains("rv-inline")) form.remove();
    await hooks.refreshNow();
    const item =
      document.getElementById(`nr-${id}`) ?? findLink(`${target}\u0000${String(data.get("path") ?? "")}`) ?? document.getElementById(id);
    // The item reviewed, where it is now (an approved one is among the settled items: opened, and kept open, so it can hold focus).
    for (let node = item?.parentElement ?? null; node; node = node.parentElement)
      if (node instanceof HTMLDetailsElement) hooks.keepOpen(node);
    if (item instanceof HTMLElement) item.focus({ preventScroll: false });
    hooks.announce([said]);
  }

  hooks.beforeSwap.push(() => {
    setAside = [];
    const focused = document.activeElement;
    for (const details of document.querySelectorAll<HTMLDetailsElement>("#wf-blocks details.rv[open]"))
      setAside.push({ form: details, detailsId: details.id, linkKey: null, focused: details.contains(focused) ? focused : null });
    for (const form of document.querySelectorAll<HTMLFormElement>("#wf-blocks form.rv-inline")) {
      setAside.push({ form, detailsId: null, linkKey: form.dataset.for ?? "", focused: form.contains(focused) ? focused : null });
      form.remove();
    }
  });

  hooks.afterSwap.push(() => {
    for (const kept of setAside) {
      if (kept.detailsId !== null) {
        const fresh = document.getElementById(kept.detailsId);
        if (fresh && fresh !== kept.form) fresh.replaceWith(kept.form);
      } else {
        findLink(kept.linkKey ?? "")?.after(kept.form);
      }
      if (kept.focused instanceof HTMLElement && kept.form.isConnected) kept.focused.focus({ preventScroll: true });
    }
    setAside = [];
  });
}
