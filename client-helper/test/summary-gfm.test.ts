import { execFileSync } from "node:child_process";
import { codeSpan, renderSummary, type SummaryTask, type SummaryView, withPageLink } from "@waymark/protocol/pr-summary";
import { describe, expect, it } from "vitest";
import { XSS_PAYLOADS } from "../../test/pages/xss-corpus";

/** GitHub's renderer family: cmark-gfm with GitHub's extensions (Debian package cmark-gfm). */
function gfm(markdown: string): string {
  return execFileSync("cmark-gfm", ["-e", "table", "-e", "autolink", "-e", "strikethrough", "-e", "tagfilter"], {
    input: markdown,
    encoding: "utf8",
  });
}

const html = (text: string) => text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;");

function task(
  id: string,
  parent: string | null,
  name: string,
  files: Partial<NonNullable<SummaryTask["files_changed"]>>,
  extra: Partial<SummaryTask> = {},
): SummaryTask {
  return {
    id,
    parent_task_id: parent,
    name,
    status: "success",
    duration_seconds: 125,
    outcome: { summary: `${name} done` },
    metadata: { tests_status: "passed" },
    files_changed: { added: [], modified: [], deleted: [], renamed: [], uncommitted: [], ...files },
    verification: { unexpected_files: [] },
    ...extra,
  };
}

/** A realistic workflow: nested tasks, commits, a rename, a binary file, reviews, awkward file names. */
const view: SummaryView = {
  workflow: {
    name: "Billing: tax rules",
    description: "Move tax code; see www.evil.example and a@b.example",
    status: "partial_success",
    outcome: { summary: "Done mostly", achievements: ["Rules moved"], limitations: ["No EU yet"] },
    created_at: "2026-11-23T06:00:00.000Z",
    completed_at: "2026-11-23T07:00:00.000Z",
  },
  tasks: [
    task(
      "tk_parent",
      null,
      "Refactor billing",
      {
        added: ["src/billing/tax_rules.ts", "src/billing/new.ts", "docs/a|b.md"],
        modified: ["src/billing/login_helper.ts", "assets/logo.png", "src/sub/only.ts"],
        deleted: ["src/billing/tax.ts"],
        renamed: [{ from: "src/billing/tax.ts", to: "src/billing/tax_rules.ts" }],
        uncommitted: ["src/billing/new.ts", "docs/a|b.md"],
        lines: [
          { path: "src/billing/tax_rules.ts", added: 0, removed: 0 },
          { path: "src/billing/tax.ts", added: 0, removed: 40 },
          { path: "src/billing/new.ts", added: 12, removed: 0 },
          { path: "src/billing/login_helper.ts", added: 5, removed: 2 },
          { path: "assets/logo.png", binary: true },
          { path: "src/sub/only.ts", added: 3, removed: 1 },
          { path: "docs/a|b.md", added: 1, removed: 0 },
        ],
        line_totals: { added: 21, removed: 43, binary: 1 },
        commits: [
          { sha: "abc1234", subject: "Rename tax module", task: "tk_parent" },
          { sha: "def5678", subject: "[click](https://evil.example) *bold*" },
        ],
        branch: "feature/tax_rules",
      },
      { outcome: { summary: "Refactor done", manual_review_needed: true, manual_review_reason: "touches money" } },
    ),
    task(
      "tk_child",
      "tk_parent",
      "Sub step",
      {
        modified: ["src/sub/only.ts", "weird `tick` name.ts"],
        uncommitted: ["weird `tick` name.ts"],
        lines: [
          { path: "src/sub/only.ts", added: 3, removed: 1 },
          { path: "weird `tick` name.ts", added: 2, removed: 2 },
        ],
        line_totals: { added: 5, removed: 3, binary: 0 },
        commits: [],
        branch: "feature/tax_rules",
      },
      { verification: { unexpected_files: ["weird `tick` name.ts"] } },
    ),
  ],
  decisions: [{ task_id: "tk_parent", question: "Keep tax.ts?", chosen: "Rename it", reasoning: "one module", trade_offs: null }],
  issues: [
    {
      id: "is_child",
      task_id: "tk_child",
      type: "bug_encountered",
      description: "# not a heading",
      resolution: "left",
      requires_human_review: true,
    },
  ],
  totals: { tasks: 2, open_tasks: 0, duration_seconds: 3600, files_changed: 9, reviews_needed: 2 },
  chain: { head: "0".repeat(64) },
};

describe("the PR summary renders as intended on GitHub's renderer (cmark-gfm)", () => {
  const markdown = withPageLink(renderSummary(view), "https://waymark.example/s/tok");
  const rendered = gfm(markdown);
  if (process.env.WAYMARK_SHOW_SUMMARY) process.stdout.write(`${markdown}\n`);

  it("shows every path verbatim in a code span, underscores, pipes and backticks included", () => {
    for (const path of [
      "src/billing/tax_rules.ts",
      "src/billing/login_helper.ts",
      "docs/a|b.md",
      "weird `tick` name.ts",
      "assets/logo.png",
    ]) {
      expect(rendered).toContain(`<code>${html(path)}</code>`);
    }
    expect(markdown).not.toContain("login\\_helper");
  });

  it("renders file tables with counts, binary files and committed/uncommitted notes", () => {
    expect(rendered.match(/<table>/g)?.length).toBe(2);
    expect(rendered).toMatch(
      /<td>M<\/td>\s*<td><code>src\/billing\/login_helper\.ts<\/code><\/td>\s*<td align="right">5<\/td>\s*<td align="right">2<\/td>\s*<td>committed<\/td>/,
    );
    expect(rendered).toMatch(/<code>assets\/logo\.png<\/code><\/td>\s*<td align="right">binary<\/td>/);
    expect(rendered).toMatch(
      /<code>docs\/a\|b\.md<\/code><\/td>\s*<td align="right">1<\/td>\s*<td align="right">0<\/td>\s*<td>uncommitted<\/td>/,
    );
    expect(rendered).toContain("<strong>⚠ outside declared areas</strong>");
  });

  it("lists a rename once, and a parent's own files apart from its subtask's", () => {
    expect(rendered.match(/src\/billing\/tax\.ts/g)?.length).toBe(1);
    expect(rendered).toContain("<td>R</td>\n<td><code>src/billing/tax.ts</code> → <code>src/billing/tax_rules.ts</code></td>");
    const [parentPart = "", childPart = ""] = rendered.split("1.1 Sub step");
    expect(parentPart).not.toContain("src/sub/only.ts");
    expect(childPart).toContain("src/sub/only.ts");
    expect(rendered).toContain("(+21 −43, 1 binary)");
  });

  it("shows commits and the branch without claiming they were pushed, and agent text stays text", () => {
    expect(rendered).toContain("<p>Branch <code>feature/tax_rules</code> · 2 commits during this task (not known to be pushed):</p>");
    expect(rendered).toContain("<code>abc1234</code> Rename tax module");
    expect(rendered).toContain("not known to be pushed");
    expect(rendered).not.toContain("pushed to");
    expect(rendered).toContain("<p>Branch <code>feature/tax_rules</code> · no commits during this task</p>");
    // Only the link the caller asked for is a link; agent text makes neither links, emphasis nor headings.
    expect(rendered.match(/<a /g)).toEqual(["<a "]);
    expect(rendered).toContain('<a href="https://waymark.example/s/tok">Workflow page</a>');
    expect(rendered).not.toContain("<em>bold</em>");
    expect(rendered).not.toMatch(/<h\d>not a heading/);
    expect(rendered).toContain("touches money");
  });

  it.each([
    ["plain", "a.ts", "`a.ts`"],
    ["backtick inside", "a`b", "``a`b``"],
    ["double backticks", "a``b`", "``` a``b` ```"],
    ["leading space", " x", "`  x `"],
    ["newline shown", "a\nb", "`a␊b`"],
  ])("code span: %s", (_case, path, expected) => {
    expect(codeSpan(path)).toBe(expected);
  });

  it.each(["a`b", "``x``", "` lead", "trail `", "a|b", "x_y*z*"])("cmark-gfm shows %j back exactly", (path) => {
    expect(gfm(codeSpan(path))).toBe(`<p><code>${html(path)}</code></p>\n`);
    const table = `| f |\n|---|\n| ${codeSpan(path, true)} |\n`;
    expect(gfm(table)).toContain(`<td><code>${html(path)}</code></td>`);
  });
});

describe("hostile paths, names, subjects and branches render as text on GFM", () => {
  const ALLOWED_TAGS = new Set(["h2", "h3", "h4", "p", "strong", "code", "table", "thead", "tbody", "tr", "th", "td", "ul", "li", "sub"]);

  it.each(XSS_PAYLOADS)("%j", (payload) => {
    const hostile: SummaryView = {
      ...view,
      decisions: [],
      issues: [],
      tasks: [
        task("tk_x", null, payload, {
          added: [`src/${payload}.ts`],
          uncommitted: [],
          lines: [{ path: `src/${payload}.ts`, added: 1, removed: 0 }],
          line_totals: { added: 1, removed: 0, binary: 0 },
          commits: [{ sha: "abc1234", subject: payload }],
          branch: payload,
        }),
      ],
    };
    const rendered = gfm(renderSummary(hostile));
    const tags = [...rendered.matchAll(/<\/?([a-z0-9]+)/gi)].map((m) => (m[1] as string).toLowerCase());
    expect(tags.filter((tag) => !ALLOWED_TAGS.has(tag))).toEqual([]);
    expect(rendered).not.toMatch(/<[^>]*\s(href|src|on[a-z]+)=/i);
    // The path comes back as text: exactly, apart from control and bidi characters made visible.
    const visible = codeSpan(`src/${payload}.ts`).replace(/^(`+) ?|(?: ?)(`+)$/g, "");
    expect(rendered).toContain(`<code>${html(visible)}</code>`);
  });
});

describe("agent prose stays readable in the Markdown itself, escaped only where GFM would act on it", () => {
  /** The rendering of a workflow whose description is `text`, and the same without it (to compare tags). */
  function withDescription(text: string) {
    const of = (description: string) =>
      renderSummary({ ...view, tasks: [], decisions: [], issues: [], workflow: { ...view.workflow, description } });
    const markdown = of(text);
    return { markdown, rendered: gfm(markdown).replaceAll("\u2060", ""), baseline: gfm(of("plain")) };
  }
  const count = (html: string, tag: string) => html.split(tag).length - 1;

  it.each([
    "Edited app.js.",
    "Ran claude-sonnet-4-5 on it",
    'the agent\'s notes (2 of 3) + tests = 100% "green"!',
    "kept login_helper and snake_case names",
    "costs $3 in C# at ~/work: fine | ok {x} ^y",
    "a < b && c > d",
  ])("%j is written as it is", (text) => {
    const { markdown, rendered } = withDescription(text);
    expect(markdown).toContain(`\n${text}\n`);
    expect(rendered).toContain(`<p>${html(text)}</p>`);
  });

  it.each([
    ["*bold* and __init__", ["<em>", "<strong>"]],
    ["[click](https://evil.example) ![i](x.png)", ["<a ", "<img"]],
    ["`code` and ~~gone~~ and $x$ $y$", ["<code>", "<del>"]],
    ["<b>raw</b> &amp; &#60; mail a@b.example, ping @octocat, fixes #12", ["<b>", "<a "]],
    ["# not a heading", ["<h1>"]],
    ["> not a quote", ["<blockquote>"]],
    ["- not a list", ["<ul>", "<li>"]],
    ["+ not a list", ["<ul>", "<li>"]],
    ["1. not a list", ["<ol>"]],
    ["2) not a list", ["<ol>"]],
  ] as const)("%j stays text, shown exactly as written", (text, tags) => {
    const { rendered, baseline } = withDescription(text);
    for (const tag of tags) expect(count(rendered, tag), tag).toBe(count(baseline, tag));
    expect(rendered).toContain(`<p>${html(text)}</p>`);
  });
});
