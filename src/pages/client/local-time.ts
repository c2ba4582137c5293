/**
 * @module pages/client/local-time
 * Times in the viewer's zone. Pages print each point in time as `<time datetime>` with UTC text
 * (what a page without script, a feed reader or a test reads: pages/format.ts `renderTime`);
 * this rewrites the text with the viewer's clock, the year only when it is not this one. One
 * source for the live pages (live.ts) and the owner pages (owner.ts).
 */

const thisYear = new Date().getFullYear();
const clock = new Intl.DateTimeFormat(undefined, {
  month: "short",
  day: "numeric",
  hour: "2-digit",
  minute: "2-digit",
  timeZoneName: "short",
});
const oldClock = new Intl.DateTimeFormat(undefined, {
  year: "numeric",
  month: "short",
  day: "numeric",
  hour: "2-digit",
  minute: "2-digit",
  timeZoneName: "short",
});

/** Rewrites every `<time datetime>` under `node` in the viewer's time zone. */
export function localizeTimes(node: ParentNode): void {
  for (const time of node.querySelectorAll("time[datetime]")) {
    const at = new Date(time.getAttribute("datetime") ?? "");
    if (!Number.isNaN(at.getTime())) time.textContent = (at.getFullYear() === thisYear ? clock : oldClock).format(at);
  }
}
