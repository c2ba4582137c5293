/**
 * @module pages/local-time
 * Times in the viewer's zone. Pages print each point in time as `<time datetime>` with UTC text
 * (what a page without script, a feed reader or a test reads: format.ts `renderTime`); this
 * script rewrites the text with the viewer's clock, the year only when it is not this one. One
 * source for the live pages (live-client.ts) and the owner pages (dashboard, tokens).
 */

/** Script source defining `localizeTimes(node)`, for a page script to call on a node and its subtree. */
export const LOCALIZE_TIMES = `var localizeTimes = (function () {
    var thisYear = new Date().getFullYear();
    var clock = new Intl.DateTimeFormat(undefined, { month: "short", day: "numeric", hour: "2-digit", minute: "2-digit", timeZoneName: "short" });
    var oldClock = new Intl.DateTimeFormat(undefined, { year: "numeric", month: "short", day: "numeric", hour: "2-digit", minute: "2-digit", timeZoneName: "short" });
    return function (node) {
      Array.prototype.forEach.call(node.querySelectorAll("time[datetime]"), function (t) {
        var at = new Date(t.getAttribute("datetime"));
        if (!isNaN(at.getTime())) t.textContent = (at.getFullYear() === thisYear ? clock : oldClock).format(at);
      });
    };
  })();`;

/** The owner pages' one script (inlined with the response's CSP nonce): their times, localized once. */
export const LOCAL_TIME_SCRIPT = `(function () {
  "use strict";
  ${LOCALIZE_TIMES}
  localizeTimes(document);
})();`;
