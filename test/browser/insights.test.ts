import type { Page } from "playwright-core";
import { describe, expect, it } from "vitest";
import { violationsInEveryMode } from "../support/axe";
import { eventually } from "../support/eventually";
import { recordAgentTasks } from "../support/insight-tasks";
import { comparedText, figureCells, figureColumns } from "../support/insights-page";
import { visibleText } from "../support/page-text";
import { skipBrowser, useServerAndBrowser } from "./browser";

/**
 * The dashboard's Insights page in Chromium against `wrangler dev`, for tasks of three agents (a
 * client speaking the helper's wire format: its figures are claims): the figures per agent with
 * the tasks they rest on and their sources, a group below the minimum shown as such, the trend
 * and comparison with their numbers as tables, the period, grouping, trend and comparison chosen
 * by keyboard through the page's GET forms, the CSV link; axe finds nothing in either colour
 * scheme at 1280 and 375 px.
 */
async function submitByKeyboard(page: Page, button: string): Promise<void> {
  await page.locator(button).focus();
  await Promise.all([page.waitForNavigation(), page.keyboard.press("Enter")]);
}

describe.skipIf(skipBrowser)("the Insights page in Chromium", () => {
  const env = useServerAndBrowser();

  it("figures per agent with their sources, a comparison that says what the data can tell, by keyboard; axe finds nothing", async () => {
    const server = env.server();
    await recordAgentTasks(env.callTool, "Insights page", [
      { agent: "claude-code", model: "claude-sonnet-4-5", tasks: 6, passing: true },
      { agent: "codex", model: "gpt-5.5", tasks: 6, passing: false, outside: 2 },
      { agent: "cursor", model: "auto", tasks: 2, passing: true },
    ]);
    // The account's rollups take the tasks within the outbox's batching delay.
    await eventually(
      "the account's insights counting 14 tasks",
      async () => {
        const response = await fetch(`${server.url}/api/insights`, { headers: { Authorization: `Bearer ${server.token}` } });
        const body = (await response.json()) as { total: { tasks: number } };
        return body.total.tasks === 14 ? body : null;
      },
      20_000,
    );

    const context = await env.browser().newContext();
    const page = await context.newPage();
    await page.goto(`${server.url}/login`);
    await page.fill('input[name="token"]', server.token);
    await Promise.all([page.waitForURL("**/dashboard"), page.click('button[type="submit"]')]);
    // From the dashboard's navigation.
    await Promise.all([page.waitForURL("**/dashboard/insights"), page.click('nav a[href="/dashboard/insights"]')]);
    expect(await page.locator("h1").innerText()).toBe("Insights");

    // Group by agent only, by keyboard.
    await page.locator('input[name="by"][value="model"]').uncheck();
    await submitByKeyboard(page, 'form[aria-label="What the figures cover"] button[type="submit"]');
    expect(new URL(page.url()).searchParams.getAll("by")).toEqual(["agent"]);
    expect(await figureColumns(page)).toEqual(["all tasks", "claude-code", "codex", "cursor"]);
    const row = (label: string) => figureCells(page, label);
    const tests = await row("A test run passed after the last edit");
    expect(tests[1]).toMatch(/^100% \(95% CI \d+%–100%\) 6 of 6 tasks claimed 6$/);
    expect(tests[2]).toMatch(/^0% \(95% CI 0%–\d+%\) 0 of 6 tasks claimed 6$/);
    expect(tests[3]).toBe("not shown fewer than 5 tasks (2)");
    const claimed = await row("Called successful by the agent");
    expect(claimed[1]).toContain("6 of 6 tasks claimed 6");
    const outside = await row("Changed files outside the declared areas");
    expect(outside[2]).toMatch(/^33% .* 2 of 6 tasks claimed 6$/);

    // The comparison: claude-code against codex, each difference with its interval and what it says.
    const text = visibleText(await page.content());
    expect(text).toContain("Compare: claude-code against codex");
    const compared = (label: string) => comparedText(page, label);
    expect(await compared("A test run passed after the last edit")).toMatch(
      /^\+100 points \(95% CI \+\d+ points to \+100 points\): higher for claude-code$/,
    );
    expect(await compared("Called successful by the agent")).toMatch(
      /^\+0 points \(95% CI −\d+ points to \+\d+ points\): the data cannot tell them apart$/,
    );
    expect(await compared("Given a verdict by a person")).toContain("the data cannot tell them apart");

    // Compare codex against claude-code instead, and follow another figure over time, by keyboard.
    const compareForm = page.locator('form[aria-label="Which groups to compare"]');
    await compareForm.locator('select[name="a"]').selectOption({ label: "codex" });
    await compareForm.locator('select[name="b"]').selectOption({ label: "claude-code" });
    await submitByKeyboard(page, 'form[aria-label="Which groups to compare"] button');
    expect(visibleText(await page.content())).toContain("Compare: codex against claude-code");
    expect(await compared("A test run passed after the last edit")).toMatch(/^−100 points .*: higher for claude-code$/);
    expect(new URL(page.url()).searchParams.getAll("by")).toEqual(["agent"]);
    await page.locator('select[name="trend"]').selectOption({ label: "agent's line share" });
    await submitByKeyboard(page, 'form[aria-label="What the figures cover"] button[type="submit"]');
    expect(await page.locator("#trend-title").innerText()).toBe("Trend: Added lines written by the agent's own edit tools, by day");
    const trendRow = await page
      .locator("table.insights", { has: page.locator("caption", { hasText: "Numbers of the trend chart" }) })
      .locator("tbody tr")
      .last()
      .innerText();
    expect(trendRow.replace(/\s+/g, " ")).toMatch(/90% \(6 tasks\) 50% \(6 tasks\) not shown \(2 tasks\)$/);

    // The CSV of what the page shows, through the same session.
    const csvHref = await page.locator('a:text("Download these figures as CSV")').getAttribute("href");
    const csv = await page.request.get(`${server.url}${csvHref}`);
    expect(csv.status()).toBe(200);
    expect((await csv.text()).split("\r\n")[0]).toMatch(/^period_from,period_to,group,agent,model,/);

    expect(await violationsInEveryMode(page, "insights")).toEqual([]);
    await context.close();
  }, 180_000);
});
