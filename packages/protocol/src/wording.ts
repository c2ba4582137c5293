/**
 * @module wording
 * Words a person reads, the same on every rendering (the pages, the Markdown export, `waymark
 * summary`): a stored value of a fixed set (an issue's type, a decision's category) as words
 * ("bug_encountered" → "Bug encountered"), a count with its noun in the right number ("1 commit",
 * "2 commits"), and money as money ("$1.37"). Stored values stay as they are in the record and the
 * JSON export; only what is shown is worded.
 */

/** Words for the values a record stores as identifiers, where plain substitution would read badly. */
const SPELLED: Record<string, string> = {
  library_choice: "Library choice",
  trade_off: "Trade-off",
  not_run: "not run",
  typecheck: "Type-check",
};

/**
 * A stored identifier as words: "bug_encountered" → "Bug encountered", "dependency_conflict" →
 * "Dependency conflict". Anything that is not a plain lowercase identifier is shown as it is
 * (agent text never reaches here as a label, but a record written by an older edge might).
 */
export function enumLabel(value: string): string {
  const spelled = SPELLED[value];
  if (spelled) return spelled;
  if (!/^[a-z][a-z0-9]*(?:_[a-z0-9]+)*$/.test(value)) return value;
  const words = value.replace(/_/g, " ");
  return `${words.charAt(0).toUpperCase()}${words.slice(1)}`;
}

/** A whole number with thousands separators: 12,345 (negative numbers keep their sign). */
export function formatCount(n: number): string {
  const sign = n < 0 ? "-" : "";
  return sign + String(Math.round(Math.abs(n))).replace(/\B(?=(\d{3})+(?!\d))/g, ",");
}

/**
 * A count and its noun in the right number: "1 commit", "2 commits", "1,204 files"; `many` when the
 * plural is not the noun plus "s" ("1 entry", "3 entries").
 */
export function counted(n: number, one: string, many = `${one}s`): string {
  return `${formatCount(n)} ${n === 1 ? one : many}`;
}

/**
 * An amount in US dollars as money: "$1.37", "$1,204.50", "$0.00"; an amount above zero that
 * rounds to no cent is "under $0.01" (never "$0.00", which would say it cost nothing). The edge
 * records costs in US dollars only, so the currency is always the dollar.
 */
export function formatUsd(usd: number): string {
  if (usd > 0 && usd < 0.005) return "under $0.01";
  const [whole, cents] = (Math.round(usd * 100) / 100).toFixed(2).split(".");
  return `$${formatCount(Number(whole))}.${cents}`;
}
