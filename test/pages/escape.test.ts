import { describe, expect, it } from "vitest";
import { TOKENS, workerFetch } from "../support/worker";
import { recordFullWorkflow, toolCaller } from "./fixture";
import { asRepoPath, XSS_PAYLOADS } from "./xss-corpus";

const acme = toolCaller(workerFetch, "http://localhost/mcp", TOKENS.acme);

/** Server-side escaping of every field, in the page and both exports (the browser tests prove it inert in Chromium). */
describe.each(XSS_PAYLOADS.map((p, i) => [i, p] as const))("payload %i", (_index, payload) => {
  it("is escaped in the page and the exports", async () => {
    const recorded = await recordFullWorkflow(acme, { text: () => payload, path: (label) => asRepoPath(payload, label), complete: true });
    const page = await (await workerFetch(recorded.shareUrl)).text();
    const withoutOwnScript = page
      .replace(/<script nonce="[^"]+">[\s\S]*?<\/script>/, "")
      .replace(/<style nonce="[^"]+">[\s\S]*?<\/style>/, "");
    // No raw markup character of the payload survives outside our own script and style.
    if (/[<>"]/.test(payload)) expect(withoutOwnScript).not.toContain(payload);
    // Our only <details> are task cards: anything else is the payload's.
    const tag = /<(script|svg|iframe|img)\b|<details (?!class="task-card"( open)?>)/i.exec(withoutOwnScript);
    expect(tag ? withoutOwnScript.slice(tag.index - 80, tag.index + 80) : null).toBeNull();
    // An event-handler attribute inside a real tag (escaped text may say "onerror=", harmlessly).
    // Quoted attribute values (escaped by construction) are blanked first.
    expect(/<[a-z][^>]*\son[a-z]+\s*=/i.test(withoutOwnScript.replace(/="[^"]*"/g, '=""'))).toBe(false);
    expect(/href="javascript:/i.test(withoutOwnScript)).toBe(false);

    const view = await (await workerFetch(`${recorded.shareUrl}/export.json`)).json();
    expect(JSON.stringify(view)).toContain(JSON.stringify(payload).slice(1, -1));

    const md = await (await workerFetch(`${recorded.shareUrl}/export.md`)).text();
    // Paths are shown verbatim in code spans, whose content GFM never parses (cmark-gfm proves it
    // on this corpus in client-helper/test/summary-gfm.test.ts): the checks apply to the rest.
    const agentLines = md
      .split("\n")
      .filter((line) => line.length > 0)
      .map((line) => line.replace(/(`+)(?!`)[\s\S]*?(?<!`)\1(?!`)/g, "CODE"));
    for (const line of agentLines) {
      expect(line, line).not.toMatch(/<(?!sub>|\/sub>)/);
      expect(line).not.toMatch(/(?<!\\)\[[^\]]*(?<!\\)\]\(/);
      expect(line).not.toMatch(/(?<!\\)!\[/);
    }
    // Headings only where the export puts them.
    expect(md.split("\n").filter((l) => /^#/.test(l) && !/^#{2,3} /.test(l) && !/^#{4,6} \d+(\.\d+)* /.test(l))).toEqual([]);
  });
});
