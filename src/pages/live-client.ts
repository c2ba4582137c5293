/**
 * @module pages/live-client
 * The live page script, inlined with the response's CSP nonce. It renders nothing itself:
 * the server's renderer (page.ts) is the only one. The workflow object's WebSocket says
 * that events happened (seq numbers); the script then fetches the page's blocks rendered
 * now (`<base>/blocks`, with the seq they show in `Waymark-Seq`) and swaps in the elements
 * whose markup changed, matched by id. Hence:
 *  - the page after any number of events is the page a fresh load would show;
 *  - nothing is missed or shown twice: each swap shows one whole state, and the socket
 *    reconnects (exponential backoff) from the seq of the state on screen;
 *  - one blocks request is in flight at a time, and after a slow one (100 ms or more: a large
 *    workflow) the next waits twice as long as it took; events arriving meanwhile are coalesced,
 *    and a paged catch-up ({"type":"more"} → {"after": n}) is swapped in once, at its end;
 *  - close code 4410 (or 4401 on the owner view: signed out), or a 404/410 for the blocks, means the link is no longer valid: the
 *    workflow's content is removed from the page.
 * Markup comes only from the server, which escaped every agent-written value; it is
 * parsed in an inert <template> (scripts there never run, and the CSP allows none).
 *
 * It also makes the page read well for its viewer: times (<time datetime>, UTC in the markup)
 * are shown in the viewer's time zone (local-time.ts), before a swap so unchanged blocks stay equal; tasks the
 * viewer opened or closed stay so across swaps; the task a link points to is opened; the live
 * indicator shows only while the workflow is active; printing opens every task.
 */
import { LOCALIZE_TIMES } from "./local-time";

export const LIVE_SCRIPT = `(function () {
  "use strict";
  var root = document.getElementById("wm");
  var blocks = document.getElementById("wf-blocks");
  if (!root || !blocks) return;
  var base = root.dataset.base;
  var shownSeq = Number(root.dataset.seq);
  var knownSeq = shownSeq;
  var socket = null;
  var attempt = 0;
  var fetching = false;
  var catchingUp = true;
  var stopped = false;
  var liveBadge = document.getElementById("live");
  ${LOCALIZE_TIMES}

  // Only an active workflow is "live"; a finished one says "completed" in its header.
  function showLiveBadge() {
    var header = document.getElementById("wf-header");
    if (liveBadge) liveBadge.hidden = Boolean(header && header.dataset.status !== "active");
  }

  function setState(state, label) {
    root.dataset.state = state;
    if (liveBadge) { liveBadge.textContent = label; liveBadge.className = "live " + (state === "live" ? "on" : "off"); }
    showLiveBadge();
  }

  // Tasks the viewer opened or closed, by task id (a task's card is the first child of its item):
  // swaps bring the server's default back, this restores the viewer's choice.
  var chosen = new Map();
  document.addEventListener("click", function (e) {
    var summary = e.target && e.target.closest ? e.target.closest("summary") : null;
    var details = summary && summary.parentElement;
    var item = details && details.parentElement;
    if (details && details.tagName === "DETAILS" && item && item.id && summary === details.firstElementChild) chosen.set(item.id, !details.open);
  });
  function cardOf(id) {
    var item = document.getElementById(id);
    var card = item && item.firstElementChild;
    return card && card.tagName === "DETAILS" ? card : null;
  }
  function restoreChosen() {
    chosen.forEach(function (open, id) {
      var card = cardOf(id);
      if (card && card.open !== open) card.open = open;
    });
  }

  // A link to a task, decision or issue inside closed tasks opens them.
  function revealTarget() {
    var id = location.hash.slice(1);
    try { id = decodeURIComponent(id); } catch (e) {}
    var target = id ? document.getElementById(id) : null;
    for (var node = target; node; node = node.parentElement) {
      if (node.tagName === "DETAILS" && !node.open) { node.open = true; if (node.parentElement && node.parentElement.id) chosen.set(node.parentElement.id, true); }
    }
  }
  window.addEventListener("hashchange", revealTarget);

  // Printing shows every task; closed ones close again afterwards.
  var printed = [];
  window.addEventListener("beforeprint", function () {
    printed = Array.prototype.filter.call(document.querySelectorAll("details:not([open])"), function (d) { d.open = true; return true; });
  });
  window.addEventListener("afterprint", function () { printed.forEach(function (d) { d.open = false; }); printed = []; });

  // The owner view (data-audience="owner") loses its feed when the session ends, not a link.
  var owner = root.dataset.audience === "owner";

  function gone() {
    stopped = true;
    if (socket) try { socket.close(); } catch (e) {}
    setState("gone", owner ? "signed out" : "not shared");
    var box = document.createElement("div");
    box.className = "gone";
    var title = document.createElement("h1");
    title.textContent = owner ? "You are signed out" : "This workflow is no longer shared";
    var text = document.createElement("p");
    text.textContent = owner
      ? "Your session ended. Sign in again to follow this workflow."
      : "The link was revoked, has expired or never existed. Ask the owner for a new link.";
    box.append(title, text);
    root.replaceChildren(box);
  }

  // Lists whose items all have ids (whitespace between them aside) are reconciled item by item.
  function keyedChildren(node) {
    return node.children.length > 0 && Array.prototype.every.call(node.childNodes, function (c) {
      return c.nodeType === 1 ? Boolean(c.id) : c.nodeType === 3 && !c.textContent.trim();
    });
  }

  // Brings "current" to "next" (same id), keeping unchanged subtrees as they are (open <details>, selection).
  function morph(current, next) {
    if (current.isEqualNode(next)) return;
    if (current.tagName !== next.tagName || !keyedChildren(next) || !(current.children.length === 0 || keyedChildren(current))) {
      current.replaceWith(next);
      return;
    }
    Array.prototype.slice.call(current.attributes).forEach(function (a) { if (!next.hasAttribute(a.name)) current.removeAttribute(a.name); });
    Array.prototype.slice.call(next.attributes).forEach(function (a) { current.setAttribute(a.name, a.value); });
    var byId = new Map();
    Array.prototype.forEach.call(current.children, function (c) { byId.set(c.id, c); });
    Array.prototype.slice.call(next.children).forEach(function (n, i) {
      var old = byId.get(n.id);
      byId.delete(n.id);
      var at = current.children[i] || null;
      if (old) { if (old !== at) current.insertBefore(old, at); morph(old, n); }
      else current.insertBefore(n, at);
    });
    byId.forEach(function (old) { old.remove(); });
  }

  function swap(markup, seq) {
    var template = document.createElement("template");
    template.innerHTML = markup;
    localizeTimes(template.content);
    var next = document.createElement("div");
    next.id = "wf-blocks";
    next.append(template.content);
    morph(blocks, next);
    blocks = document.getElementById("wf-blocks");
    restoreChosen();
    showLiveBadge();
    var name = blocks.querySelector(".wf-name");
    if (name) document.title = name.textContent + " — Waymark";
    shownSeq = Math.max(shownSeq, seq);
    root.dataset.seq = String(shownSeq);
  }

  // The blocks cost the server in proportion to the workflow's size (a 5,000-task page: a quarter
  // of a second): after a fetch that took 100 ms or more, the next waits twice as long, so a busy
  // large workflow never keeps a viewer's fetches back to back. Events that arrive during a
  // fetch of a small page are fetched 50 ms after it; an event after a pause, at once.
  var nextFetchAt = 0;
  var waiting = false;
  function refresh() {
    if (fetching || waiting || stopped || knownSeq <= shownSeq) return;
    var wait = nextFetchAt - Date.now();
    if (wait > 0) {
      waiting = true;
      setTimeout(function () { waiting = false; refresh(); }, wait);
      return;
    }
    fetching = true;
    var started = Date.now();
    fetch(base + "/blocks", { cache: "no-store" }).then(function (r) {
      if (r.status === 404 || r.status === 410) return gone();
      if (!r.ok) throw new Error("status " + r.status);
      var seq = Number(r.headers.get("Waymark-Seq"));
      return r.text().then(function (markup) { swap(markup, seq); knownSeq = Math.max(knownSeq, seq); });
    }).catch(function () {}).then(function () {
      fetching = false;
      var now = Date.now();
      var took = now - started;
      nextFetchAt = took >= 100 ? now + 2 * took : now;
      if (knownSeq > shownSeq) setTimeout(refresh, 50);
    });
  }

  function onMessage(message) {
    var msg;
    try { msg = JSON.parse(message.data); } catch (e) { return; }
    if (msg.type === "event" && msg.event && typeof msg.event.seq === "number") {
      knownSeq = Math.max(knownSeq, msg.event.seq);
      // While catching up, one swap at the end shows it all.
      if (!catchingUp) refresh();
    } else if (msg.type === "more") {
      // Catch-up comes in pages: ask for the next one.
      if (socket && socket.readyState === 1) socket.send(JSON.stringify({ after: msg.seq }));
    } else if (msg.type === "caught_up") {
      catchingUp = false;
      attempt = 0;
      setState("live", "live");
      refresh();
    }
  }

  function connect() {
    if (stopped) return;
    var opened = false;
    catchingUp = true;
    var ws = new WebSocket((location.protocol === "https:" ? "wss://" : "ws://") + location.host + base + "/ws?after=" + shownSeq);
    socket = ws;
    ws.onopen = function () { opened = true; };
    ws.onmessage = onMessage;
    ws.onclose = function (e) {
      if (socket !== ws) return;
      socket = null;
      if (e.code === 4410 || e.code === 4401) return gone();
      setState("reconnecting", "reconnecting…");
      // A refused upgrade looks like any network failure: ask the server whether the link still works.
      var check = opened ? Promise.resolve(true) : fetch(base + "/blocks", { method: "HEAD", cache: "no-store" }).then(function (r) {
        return !(r.status === 404 || r.status === 410);
      }, function () { return true; });
      check.then(function (valid) {
        if (!valid) return gone();
        var delay = Math.min(10000, 250 * Math.pow(2, attempt++)) * (0.75 + Math.random() * 0.5);
        setTimeout(connect, delay);
      });
    };
  }

  // A small handle for people debugging (and for the browser tests): the seq on screen and a way to drop the socket.
  window.waymarkLive = {
    get seq() { return shownSeq; },
    get state() { return root.dataset.state; },
    disconnect: function () { if (socket) socket.close(); },
  };
  localizeTimes(document);
  revealTarget();
  setState("connecting", "connecting…");
  connect();
})();`;
