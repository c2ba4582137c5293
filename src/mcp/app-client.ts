/**
 * @module app-client — the script of the review app (src/mcp/app.ts) that MCP Apps hosts render
 * next to the conversation. It speaks the extension's postMessage JSON-RPC with its host
 * (ui/initialize, then tool results arrive as notifications), and reaches Waymark only through
 * the host: `resources/read` for the workflow's blocks, `tools/call send_feedback` for the form.
 * It renders nothing itself: the blocks and the form are the share page's renderer's markup,
 * every agent-written value escaped by the server, parsed in an inert <template> (scripts there
 * never run) before it is shown. The host's CSP allows no network access at all.
 */
export const APP_SCRIPT = `(() => {
  const blocks = document.getElementById("wf-blocks");
  const status = document.getElementById("app-status");
  const pending = new Map();
  let nextId = 1;
  let shown = null;
  let workflow = null;
  const post = (message) => window.parent.postMessage(message, "*");
  const request = (method, params) =>
    new Promise((resolve, reject) => {
      const id = nextId++;
      pending.set(id, { resolve, reject });
      post({ jsonrpc: "2.0", id, method, params });
    });
  const notify = (method, params) => post({ jsonrpc: "2.0", method, params });
  const say = (text) => { status.textContent = text; };
  const resized = () => notify("ui/notifications/size-changed", { width: document.documentElement.scrollWidth, height: document.documentElement.scrollHeight });

  /** The workflow or task a tool result names; the server resolves a task to its workflow. */
  function named(result) {
    const s = (result && result.structuredContent) || {};
    if (typeof s.workflow_id === "string") return s.workflow_id;
    if (s.workflow && typeof s.workflow.id === "string") return s.workflow.id;
    if (typeof s.task_id === "string") return s.task_id;
    if (s.task && typeof s.task.id === "string") return s.task.id;
    return null;
  }

  async function show(id) {
    shown = id;
    say("Loading…");
    try {
      const read = await request("resources/read", { uri: "waymark://review/" + encodeURIComponent(id) });
      const text = read && read.contents && read.contents[0] && read.contents[0].text;
      const template = document.createElement("template");
      template.innerHTML = typeof text === "string" ? text : "";
      blocks.replaceChildren(template.content);
      workflow = blocks.querySelector("[data-workflow]")?.getAttribute("data-workflow") ?? null;
      say("");
    } catch (error) {
      blocks.replaceChildren();
      say("This workflow could not be shown: " + error.message);
    }
    resized();
  }

  document.addEventListener("submit", async (event) => {
    const form = event.target;
    if (!(form instanceof HTMLFormElement) || !form.closest("#feedback")) return;
    event.preventDefault();
    const data = new FormData(form);
    const button = form.querySelector("button");
    button.disabled = true;
    try {
      const result = await request("tools/call", {
        name: "send_feedback",
        arguments: { workflow_id: workflow, target: data.get("target"), verdict: data.get("verdict"), body: data.get("body") },
      });
      const text = result && result.content && result.content[0] ? result.content[0].text : "";
      if (result && result.isError) { say(text); return; }
      form.reset();
      await show(shown);
      say("Sent: the agent receives it in the result of its next tool call.");
    } catch (error) {
      say("Not sent: " + error.message);
    } finally {
      button.disabled = false;
    }
  });

  window.addEventListener("message", (event) => {
    if (event.source !== window.parent) return;
    const message = event.data;
    if (!message || message.jsonrpc !== "2.0") return;
    if (message.method === undefined && pending.has(message.id)) {
      const waiting = pending.get(message.id);
      pending.delete(message.id);
      if (message.error) waiting.reject(new Error(message.error.message));
      else waiting.resolve(message.result);
      return;
    }
    if (message.method === "ui/notifications/tool-result") {
      const id = named(message.params);
      if (id) show(id);
      else say("This tool result names no workflow.");
    } else if (message.id !== undefined && (message.method === "ui/resource-teardown" || message.method === "ping")) {
      post({ jsonrpc: "2.0", id: message.id, result: {} });
    }
  });

  new ResizeObserver(resized).observe(document.body);
  request("ui/initialize", { appInfo: { name: "waymark-review", version: "1" }, appCapabilities: {}, protocolVersion: "2026-01-26" })
    .then(() => notify("ui/notifications/initialized", {}))
    .catch((error) => say("The host refused the app: " + error.message));
})();`;
