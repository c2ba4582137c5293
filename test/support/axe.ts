/**
 * @module test/support/axe
 * axe-core run in a real Chromium page, in every mode the pages promise: WCAG 2.1 A/AA rules (and
 * the 24×24 px target size) at 1280 and 375 px in the light colour scheme, and the colour rules in
 * the dark one (whose styles set colours only: checked on the page's own style sheets).
 */
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import type { Page } from "playwright-core";

const AXE_SOURCE = readFileSync(createRequire(import.meta.url).resolve("axe-core/axe.min.js"), "utf8");
const AXE_TAGS = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"];

interface AxeViolation {
  id: string;
  help: string;
  nodes: { target: unknown[]; failureSummary?: string }[];
}

/** axe-core's violations on the page as it is now: one line per rule, with up to three of its elements. */
export async function axeViolations(page: Page, only: readonly string[] | null = null): Promise<string[]> {
  // Evaluated through the DevTools protocol: the page's CSP (nonce'd scripts only) stays on. Once
  // per loaded document: the modes of one page are checked on the same document.
  if (!(await page.evaluate(() => "axe" in globalThis))) await page.evaluate(AXE_SOURCE);
  const violations = await page.evaluate(
    async ({ tags, only }) => {
      type Axe = { run(context: unknown, options: unknown): Promise<{ violations: AxeViolation[] }> };
      const axe = (globalThis as unknown as { axe: Axe }).axe;
      const result = await axe.run((globalThis as unknown as { document: unknown }).document, {
        runOnly: only ? { type: "rule", values: only } : { type: "tag", values: tags },
        rules: only ? {} : { "target-size": { enabled: true } },
        resultTypes: ["violations"],
      });
      return result.violations.map((v) => ({
        id: v.id,
        help: v.help,
        nodes: v.nodes.map((n) => ({ target: n.target, failureSummary: n.failureSummary })),
      }));
    },
    { tags: AXE_TAGS, only },
  );
  return violations.map(
    (v) =>
      `${v.id} (${v.help}): ${v.nodes.length} × ${v.nodes
        .slice(0, 3)
        .map((n) => `${JSON.stringify(n.target)} ${n.failureSummary ?? ""}`)
        .join(" | ")}`,
  );
}

export const MODES = [
  { colorScheme: "light", width: 1280 },
  { colorScheme: "light", width: 375 },
  { colorScheme: "dark", width: 1280 },
  { colorScheme: "dark", width: 375 },
] as const;
export type Mode = (typeof MODES)[number];
const modeName = (m: Mode) => `${m.colorScheme} ${m.width}px`;

/** The rules whose outcome depends on colours (WCAG 1.4.3 and 1.4.1): all the dark scheme can change. */
export const COLOUR_RULES = ["color-contrast", "link-in-text-block"] as const;

/**
 * What the dark scheme changes in the page's styles: the declarations inside its
 * `prefers-color-scheme` media rules that are not custom properties (colours), one line each.
 */
async function darkSchemeBeyondColours(page: Page): Promise<string[]> {
  return page.evaluate(() => {
    type Rule = { conditionText?: string; cssRules?: ArrayLike<Rule>; style?: ArrayLike<string>; cssText: string };
    const sheets = (globalThis as unknown as { document: { styleSheets: ArrayLike<{ cssRules: ArrayLike<Rule> }> } }).document.styleSheets;
    const beyond: string[] = [];
    for (const sheet of Array.from(sheets)) {
      for (const rule of Array.from(sheet.cssRules)) {
        if (!rule.conditionText?.includes("prefers-color-scheme")) continue;
        for (const inner of Array.from(rule.cssRules ?? [])) {
          for (const property of Array.from(inner.style ?? []))
            if (!property.startsWith("--")) beyond.push(`${property} in ${inner.cssText}`);
        }
      }
    }
    return beyond;
  });
}

/**
 * The page's violations in every mode, one line each, prefixed with `name` and the mode. The
 * document is loaded once: the colour scheme and the width are media features (the pages' styles
 * are all CSS and no script reads either), so switching them restyles the page as loading it in
 * that mode would. Every rule runs at both widths in the light scheme; the dark scheme sets
 * colours only (asserted here, on the page's own style sheets), so at each width it can change
 * only what the colour rules check, and they are what runs in it.
 */
export async function violationsInEveryMode(page: Page, name: string): Promise<string[]> {
  const found = (await darkSchemeBeyondColours(page)).map((line) => `${name}: the dark scheme sets more than colours: ${line}`);
  for (const mode of MODES) {
    await page.emulateMedia({ colorScheme: mode.colorScheme });
    await page.setViewportSize({ width: mode.width, height: 900 });
    const only = mode.colorScheme === "dark" ? COLOUR_RULES : null;
    for (const violation of await axeViolations(page, only)) found.push(`${name}, ${modeName(mode)}: ${violation}`);
  }
  return found;
}
