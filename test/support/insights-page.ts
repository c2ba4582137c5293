/**
 * @module test/support/insights-page
 * The dashboard's Insights page as a reader reads it in Chromium: a figure's row of the figures
 * table (one cell per group, the total first, whitespace folded), and what the comparison table
 * says of a figure (its difference, interval and verdict), each found by the figure's label.
 */
import type { Page } from "playwright-core";

const fold = (text: string) => text.replace(/\s+/g, " ").trim();

/** The first table's row of `label` (the figure): one text per column after the figure's name. */
export async function figureCells(page: Page, label: string): Promise<string[]> {
  const row = page
    .locator("table.insights")
    .first()
    .locator("tbody tr", { has: page.locator(`th:text-is("${label}")`) });
  // innerText: a cell's line breaks (<br>) are spaces once folded, as a reader sees them.
  return (await row.locator("td").allInnerTexts()).map(fold);
}

/** The first table's group names, in column order after the figure's name (the total first). */
export async function figureColumns(page: Page): Promise<string[]> {
  return (await page.locator("table.insights").first().locator("thead th").allInnerTexts()).map(fold).slice(1);
}

/** The comparison table's last cell for `label`: "+100 points (95% CI +46 points to +100 points): higher for …". */
export async function comparedText(page: Page, label: string): Promise<string> {
  const comparison = page.locator("table.insights", { has: page.locator("caption", { hasText: "Numbers of the comparison" }) });
  return fold(
    (await comparison
      .locator("tbody tr", { has: page.locator(`th:text-is("${label}")`) })
      .locator("td")
      .last()
      .textContent()) ?? "",
  );
}
