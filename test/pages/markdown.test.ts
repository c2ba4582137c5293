import { describe, expect, it } from "vitest";
import { escapeMarkdown } from "../../src/pages/markdown";
import { TOKENS, workerFetch } from "../support/worker";
import { toolCaller } from "./fixture";

const acme = toolCaller(workerFetch, "http://localhost/mcp", TOKENS.acme);

/**
 * GFM's extended autolinks (cmark-gfm's autolink extension) look at the text after
 * backslash escapes are resolved, so they are checked here on the unescaped text:
 * e-mail addresses, `www.` names, and `scheme:` links. The export's own closing line, which names
 * the endpoint in code spans (never autolinked), is not agent text.
 */
function autolinks(markdown: string): string[] {
  const text = markdown.replace(/^<sub>The JSON export of this record carries a statement.*$/m, "").replace(/\\(.)/g, "$1");
  const patterns = [
    /[A-Za-z0-9._+-]+@[A-Za-z0-9_-]+(\.[A-Za-z0-9_-]+)+/g,
    /(^|[\s*_~(])www\.[A-Za-z0-9_-]+/g,
    /\b(https?|ftp):\/\/[^\s<]+/g,
    /\b(mailto|xmpp):[A-Za-z0-9._+-]+@[A-Za-z0-9_-]+/g,
  ];
  return patterns.flatMap((pattern) => text.match(pattern) ?? []);
}

const BIDI = /[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/;

describe("Markdown export of agent text", () => {
  it.each([
    "mail a@b.example now",
    "xmpp:alice@chat.example",
    "mailto:bob@b.example",
    "see www.evil.example/x",
    "https://evil.example/login",
    "ftp://files.example/x",
  ])("no autolink survives: %s", (text) => {
    expect(autolinks(text).length).toBeGreaterThan(0);
    expect(autolinks(escapeMarkdown(text))).toEqual([]);
  });

  it.each([
    ["right-to-left override", "invoice\u202etxt.exe", "invoice[U+202E]txt.exe"],
    ["isolates", "a\u2066b\u2069c", "a[U+2066]b[U+2069]c"],
    ["marks", "x\u200fy\u200ez\u061c", "x[U+200F]y[U+200E]z[U+061C]"],
  ])("bidi controls are shown, not obeyed: %s", (_case, text, visible) => {
    const escaped = escapeMarkdown(text);
    expect(escaped).not.toMatch(BIDI);
    expect(escaped.replace(/\\(.)/g, "$1")).toBe(visible);
  });

  it("the export and the page carry neither autolinks nor bidi controls of agent text", async () => {
    const hostile = "ping a@b.example or xmpp:c@d.example via www.e.example \u202eexe.txt";
    const wf = await acme("start_workflow", { name: hostile, description: hostile });
    const task = await acme("start_task", { workflow_id: wf.workflow_id, name: hostile, goal: hostile });
    await acme("complete_task", { task_id: task.task_id, status: "success", outcome: { summary: hostile } });
    const md = await (await workerFetch(`${String(wf.share_url)}/export.md`)).text();
    expect(md).toContain("ping");
    expect(autolinks(md)).toEqual([]);
    expect(md).not.toMatch(BIDI);
    const page = await (await workerFetch(String(wf.share_url))).text();
    expect(page).not.toMatch(BIDI);
    expect(page).toContain("[U+202E]exe.txt");
  });
});
