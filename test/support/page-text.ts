/**
 * A page's text as a reader sees it: tags removed, the entities hono/html writes decoded, runs of
 * white space folded. Tests match sentences against it without depending on the markup around them.
 */
export function visibleText(page: string): string {
  return page
    .replace(/<[^>]+>/g, "")
    .replace(/&#39;/g, "'")
    .replace(/&quot;/g, '"')
    .replace(/&lt;/g, "<")
    .replace(/&gt;/g, ">")
    .replace(/&amp;/g, "&")
    .replace(/\s+/g, " ");
}
