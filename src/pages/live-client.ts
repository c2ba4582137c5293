/**
 * The live page script, inlined with the response's CSP nonce. It keeps the page in step
 * with the workflow object's event log over a WebSocket:
 *  - events are applied strictly in seq order; seq <= the last applied is ignored, a gap
 *    asks the object again from the last applied seq ({"after": n});
 *  - entities are upserted by id, so a replayed event never shows anything twice;
 *  - after a disconnect it reconnects with exponential backoff from the last applied seq;
 *  - close code 4410, or a 404/410 on reconnect, means the link is no longer valid: the
 *    workflow's content is removed from the page.
 * All agent text reaches the DOM through textContent / createTextNode, never as markup.
 * The blocks it builds mirror page.ts (same ids and classes).
 */
export const LIVE_SCRIPT = `(function () {
  "use strict";
  var root = document.getElementById("wm");
  if (!root) return;
  var base = root.dataset.base;
  // The model comes from export.json rather than a second copy inside the page (half the bytes of a
  // large workflow). It may be newer than the HTML: lastSeq stays the HTML's, so the socket replays
  // whatever happened in between, and replays are harmless because entities are upserted by id.
  var view = null;
  var lastSeq = Number(root.dataset.seq);
  var socket = null;
  var attempt = 0;
  var retryTimer = null;
  var gapRequested = false;
  var stopped = false;
  var liveBadge = document.getElementById("live");
  var STATUS = { active: "in progress", in_progress: "in progress", success: "success", partial_success: "partial success", failed: "failed" };

  function el(tag, attrs) {
    var node = document.createElement(tag);
    if (attrs) for (var key in attrs) if (attrs[key] !== null && attrs[key] !== undefined && attrs[key] !== false) node.setAttribute(key, String(attrs[key]));
    for (var i = 2; i < arguments.length; i++) append(node, arguments[i]);
    return node;
  }
  function append(node, child) {
    if (child === null || child === undefined || child === false || child === "") return;
    if (Array.isArray(child)) { child.forEach(function (c) { append(node, c); }); return; }
    node.appendChild(typeof child === "string" || typeof child === "number" ? document.createTextNode(String(child)) : child);
  }
  function duration(s) {
    if (s === null || s === undefined) return "";
    s = Math.max(0, Math.round(s));
    if (s < 60) return s + "s";
    var m = Math.floor(s / 60);
    if (m < 60) return m + "m " + String(s % 60).padStart(2, "0") + "s";
    return Math.floor(m / 60) + "h " + String(m % 60).padStart(2, "0") + "m";
  }
  function time(iso) { return iso ? iso.slice(0, 16).replace("T", " ") + " UTC" : ""; }
  function badge(status) { return el("span", { class: "badge s-" + status }, STATUS[status] || status); }
  function list(items, cls) { return items && items.length ? el("ul", { class: cls || "" }, items.map(function (i) { return el("li", null, i); })) : null; }
  function labelled(label, content) { return content ? el("div", { class: "field" }, el("h4", null, label), content) : null; }
  function taskName(id) { var t = tasks.get(id); return t ? t.name : id; }
  function link(id, text, cls) { return el("a", { href: "#" + id, class: cls || null }, text); }

  var tasks = new Map();
  var issues = new Map();
  var decisionCount = new Set();
  function useModel(v) {
    view = v;
    tasks = new Map(v.tasks.map(function (t) { return [t.id, t]; }));
    issues = new Map(v.issues.map(function (i) { return [i.id, i]; }));
    decisionCount = new Set(v.decisions.map(function (d) { return d.id; }));
  }

  function header(w) {
    return el("div", { id: "wf-header" },
      el("h1", null, el("span", { class: "wf-name" }, w.name), " ", badge(w.status)),
      w.description ? el("p", { class: "description" }, w.description) : null,
      el("p", { class: "times" }, "Started " + time(w.created_at) + (w.completed_at ? " · completed " + time(w.completed_at) : "") + " · last activity " + time(w.updated_at)),
      w.plan.length ? el("details", { class: "plan", open: "" }, el("summary", null, "Plan (" + w.plan.length + " steps)"),
        el("ol", null, w.plan.map(function (p) { return el("li", null, el("strong", null, p.step), " — " + p.goal); }))) : null,
      w.outcome ? el("div", { class: "outcome wf-outcome" }, el("h2", null, "Outcome"), el("p", null, w.outcome.summary),
        labelled("Achievements", list(w.outcome.achievements)), labelled("Limitations", list(w.outcome.limitations))) : null);
  }

  function totals() {
    var all = Array.from(tasks.values());
    var files = new Set();
    var reviews = 0;
    all.forEach(function (t) {
      var f = t.files_changed;
      if (f) f.added.concat(f.modified, f.deleted).forEach(function (p) { files.add(p); });
      if (f) f.renamed.forEach(function (r) { files.add(r.from); files.add(r.to); });
      if (t.outcome && t.outcome.manual_review_needed) reviews++;
    });
    issues.forEach(function (i) { if (i.requires_human_review) reviews++; });
    var seconds = all.reduce(function (sum, t) { return sum + (t.parent_task_id === null ? t.duration_seconds || 0 : 0); }, 0);
    function cell(value, label) { return el("div", null, el("b", null, value), el("span", null, label)); }
    return el("div", { id: "wf-totals", class: "totals" }, cell(duration(seconds) || "0s", "duration"), cell(all.length, "tasks"),
      cell(all.filter(function (t) { return t.status === "in_progress"; }).length, "open"), cell(files.size, "files changed"),
      cell(decisionCount.size, "decisions"), cell(issues.size, "issues"), cell(reviews, "reviews needed"),
      usageCells(all, cell));
  }

  // Usage (issue 5): mirrors renderTotals and formatUsage in page.ts / format.ts.
  function usageCells(all, cell) {
    var tokens = 0, cost = 0;
    all.forEach(function (t) { if (t.metrics) { tokens += (t.metrics.input_tokens || 0) + (t.metrics.output_tokens || 0); cost += t.metrics.cost_usd || 0; } });
    return tokens > 0 || cost > 0 ? [cell(tokens, "tokens"), cell("$" + cost.toFixed(4), "cost")] : null;
  }

  function usage(m) {
    var parts = [];
    if (m.input_tokens !== null || m.output_tokens !== null) parts.push((m.input_tokens || 0) + " in · " + (m.output_tokens || 0) + " out tokens");
    if (m.model !== null) parts.push(m.model);
    if (m.cost_usd !== null) parts.push("$" + m.cost_usd.toFixed(4));
    return parts.join(" · ");
  }

  function review() {
    var flaggedTasks = Array.from(tasks.values()).filter(function (t) { return t.outcome && t.outcome.manual_review_needed; });
    var flaggedIssues = Array.from(issues.values()).filter(function (i) { return i.requires_human_review; });
    var section = el("section", { id: "wf-review", class: "review", hidden: flaggedTasks.length + flaggedIssues.length === 0 ? "" : null },
      el("h2", null, "Needs human review"),
      el("ul", null,
        flaggedTasks.map(function (t) { return el("li", null, link(t.id, t.name), ": " + (t.outcome.manual_review_reason || "manual review requested")); }),
        flaggedIssues.map(function (i) { return el("li", null, link(i.id, i.type), ": " + i.description); })));
    return section;
  }

  function files(t) {
    var f = t.files_changed;
    if (!f) return null;
    var v = t.verification || { unexpected_files: [], overlapping: [] };
    var unexpected = new Set(v.unexpected_files || []);
    var uncommitted = new Set(f.uncommitted);
    function row(status, path, shown) {
      return el("li", { class: unexpected.has(path) ? "out-of-scope" : "" }, el("span", { class: "fs fs-" + status }, status), " ", el("code", null, shown || path),
        uncommitted.has(path) ? [" ", el("span", { class: "tag" }, "uncommitted")] : null,
        unexpected.has(path) ? [" ", el("span", { class: "tag warn" }, "outside declared areas")] : null);
    }
    var rows = [].concat(
      f.added.map(function (p) { return row("A", p); }), f.modified.map(function (p) { return row("M", p); }),
      f.deleted.map(function (p) { return row("D", p); }), f.renamed.map(function (r) { return row("R", r.to, r.from + " → " + r.to); }));
    var overlaps = v.overlapping || [];
    return el("div", { class: "field files" }, el("h4", null, "Files changed (" + rows.length + ")"),
      rows.length ? el("ul", { class: "filelist" }, rows) : el("p", { class: "muted" }, "none"),
      overlaps.length ? el("div", { class: "overlaps" }, el("h4", null, "Overlaps with concurrent tasks"), el("ul", null, overlaps.map(function (o) {
        return el("li", null, el("code", null, o.path), " also changed by ", link(o.task_id, o.task_id), o.same_change ? " (same change)" : "");
      }))) : null);
  }

  function taskBody(t) {
    var o = t.outcome, m = t.metadata, v = t.verification;
    var took = t.duration_seconds !== null ? duration(t.duration_seconds) : "running since " + time(t.started_at);
    return el("div", { class: "task-body", id: "body-" + t.id },
      el("div", { class: "task-head" }, el("h3", null, t.name), " ", badge(t.status), " ", el("span", { class: "muted" }, took)),
      el("p", { class: "goal" }, t.goal),
      t.areas.length ? el("p", { class: "areas" }, t.areas.map(function (a) { return el("span", { class: "chip" }, a); })) : null,
      o ? el("div", { class: "outcome" },
        o.manual_review_needed ? el("p", { class: "alert" }, "Manual review needed" + (o.manual_review_reason ? ": " + o.manual_review_reason : "")) : null,
        el("p", null, o.summary), labelled("Achievements", list(o.achievements)), labelled("Limitations", list(o.limitations)), labelled("Next steps", list(o.next_steps))) : null,
      m ? el("div", { class: "meta" },
        m.tests_status ? el("p", null, "Tests: ", el("span", { class: "tests t-" + m.tests_status }, m.tests_status.replace("_", " "))) : null,
        labelled("Packages added", list(m.packages_added)), labelled("Packages removed", list(m.packages_removed)),
        labelled("Commands", list(m.commands_executed, "commands"))) : null,
      t.metrics ? el("p", { class: "metrics muted" }, "Usage: " + usage(t.metrics)) : null,
      files(t),
      v && v.warnings.length ? el("div", { class: "field warnings" }, el("h4", null, "Warnings"), list(v.warnings)) : null);
  }

  function milestone(ms) {
    return el("li", { class: "milestone", id: ms.id }, el("span", null, ms.message),
      ms.progress !== null ? [" ", el("progress", { max: 100, value: ms.progress }), " ", el("span", { class: "muted" }, ms.progress + "%")] : null,
      ms.metadata ? [" ", el("code", { class: "muted" }, JSON.stringify(ms.metadata))] : null);
  }

  function decision(d) {
    return el("li", { class: "decision", id: d.id },
      el("p", null, el("span", { class: "chip" }, d.category), " ", el("strong", null, d.question), " ", link(d.task_id, taskName(d.task_id), "muted")),
      d.options_considered.length ? el("ul", { class: "options" }, d.options_considered.map(function (o) { return el("li", { class: o === d.chosen ? "chosen" : "" }, o); })) : null,
      el("p", null, "Chosen: ", el("strong", null, d.chosen)), el("p", null, d.reasoning),
      d.trade_offs ? el("p", { class: "muted" }, "Trade-offs: " + d.trade_offs) : null);
  }

  function issue(i) {
    return el("li", { class: "issue" + (i.requires_human_review ? " needs-review" : ""), id: i.id },
      el("p", null, el("span", { class: "chip" }, i.type), i.requires_human_review ? [" ", el("span", { class: "tag warn" }, "needs human review")] : null, " ", link(i.task_id, taskName(i.task_id), "muted")),
      el("p", null, i.description), el("p", { class: "muted" }, "Resolution: " + i.resolution));
  }

  /** Replaces the element with the same id, or appends to the container: an upsert. */
  function upsert(node, containerId) {
    var existing = document.getElementById(node.id);
    if (existing) existing.replaceWith(node);
    else { var container = document.getElementById(containerId); if (container) container.appendChild(node); }
  }

  function upsertTask(t) {
    tasks.set(t.id, t);
    var body = document.getElementById("body-" + t.id);
    if (body) {
      body.replaceWith(taskBody(t));
      body = document.getElementById(t.id);
      if (body) body.className = "task s-" + t.status;
      return;
    }
    var parent = t.parent_task_id && document.getElementById("sub-" + t.parent_task_id) ? "sub-" + t.parent_task_id : "sub-root";
    upsert(el("li", { class: "task s-" + t.status, id: t.id }, taskBody(t), el("ul", { class: "milestones", id: "mss-" + t.id }), el("ul", { class: "subtasks", id: "sub-" + t.id })), parent);
  }

  function apply(event) {
    var d = event.data;
    switch (event.type) {
      case "workflow.started": case "workflow.completed":
        view.workflow = d; document.getElementById("wf-header").replaceWith(header(d)); document.title = d.name + " — Waymark"; break;
      case "task.started": case "task.completed": upsertTask(d); break;
      case "decision.logged": decisionCount.add(d.id); upsert(decision(d), "decisions"); break;
      case "issue.logged": issues.set(d.id, d); upsert(issue(d), "issues"); break;
      case "milestone.logged": upsert(milestone(d), "mss-" + d.task_id); break;
    }
  }

  var refreshPending = false;
  function refreshSummaries() {
    if (refreshPending) return;
    refreshPending = true;
    setTimeout(function () {
      refreshPending = false;
      document.getElementById("wf-totals").replaceWith(totals());
      document.getElementById("wf-review").replaceWith(review());
    }, 0);
  }

  function setState(state, label) {
    root.dataset.state = state;
    if (liveBadge) { liveBadge.textContent = label; liveBadge.className = "live " + (state === "live" ? "on" : "off"); }
  }

  function gone() {
    stopped = true;
    if (socket) try { socket.close(); } catch (e) {}
    setState("gone", "not shared");
    root.replaceChildren(el("div", { class: "gone" }, el("h1", null, "This workflow is no longer shared"),
      el("p", null, "The link was revoked, has expired or never existed. Ask the owner for a new link.")));
  }

  function onMessage(message) {
    var msg;
    try { msg = JSON.parse(message.data); } catch (e) { return; }
    if (msg.type === "event") {
      var seq = msg.event.seq;
      if (seq <= lastSeq) return;
      if (seq !== lastSeq + 1) {
        // The server sends each socket every event once, in order: a gap means a lost socket.
        if (!gapRequested && socket) { gapRequested = true; socket.close(); }
        return;
      }
      apply(msg.event);
      lastSeq = seq;
      root.dataset.seq = String(lastSeq);
      refreshSummaries();
    } else if (msg.type === "more") {
      // Catch-up comes in pages: ask for the next one once this one is applied.
      if (socket && socket.readyState === 1) socket.send(JSON.stringify({ after: lastSeq }));
    } else if (msg.type === "caught_up") {
      gapRequested = false;
      attempt = 0;
      setState("live", "live");
    }
  }

  function connect() {
    if (stopped) return;
    retryTimer = null;
    var opened = false;
    var url = (location.protocol === "https:" ? "wss://" : "ws://") + location.host + base + "/ws?after=" + lastSeq;
    var ws = new WebSocket(url);
    socket = ws;
    ws.onopen = function () { opened = true; };
    ws.onmessage = onMessage;
    ws.onclose = function (e) {
      if (socket !== ws) return;
      socket = null;
      if (e.code === 4410) return gone();
      setState("reconnecting", "reconnecting…");
      // A refused upgrade looks like any network failure: ask the server whether the link still works.
      var check = opened ? Promise.resolve(true) : fetch(base + "/export.json", { method: "HEAD", cache: "no-store" }).then(function (r) {
        return !(r.status === 404 || r.status === 410);
      }, function () { return true; });
      check.then(function (valid) {
        if (!valid) return gone();
        var delay = Math.min(10000, 250 * Math.pow(2, attempt++)) * (0.75 + Math.random() * 0.5);
        retryTimer = setTimeout(connect, delay);
      });
    };
  }

  // A small handle for people debugging (and for the browser tests): the applied seq and a way to drop the socket.
  window.waymarkLive = {
    get seq() { return lastSeq; },
    get state() { return root.dataset.state; },
    disconnect: function () { if (socket) socket.close(); },
  };
  function start() {
    if (stopped) return;
    fetch(base + "/export.json", { cache: "no-store" }).then(function (r) {
      if (r.status === 404 || r.status === 410) return gone();
      if (!r.ok) throw new Error("status " + r.status);
      return r.json().then(function (v) { useModel(v); connect(); });
    }).catch(function () {
      setState("reconnecting", "reconnecting…");
      retryTimer = setTimeout(start, Math.min(10000, 250 * Math.pow(2, attempt++)));
    });
  }
  setState("connecting", "connecting…");
  start();
})();`;
