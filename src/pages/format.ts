/**
 * @module pages/format
 * Display formats shared by the server page, the dashboard and the Markdown export: durations
 * (the PR summary's formatter), counts (12,345 and 1.2k), times (UTC in the markup, converted to
 * the viewer's zone by the page script) and status badges (a shape and a word, never colour alone).
 */
import { formatSeconds } from "@waymark/protocol/pr-summary";
import { formatCount, formatUsd } from "@waymark/protocol/wording";
import { html, raw } from "hono/html";

export { formatCount, formatUsd };

/** Usage reported at complete_task: "182,400 in · 12,950 out tokens · model · $1.37" (counts and money written as everywhere else). */
export function formatUsage(m: {
  input_tokens: number | null;
  output_tokens: number | null;
  model: string | null;
  cost_usd: number | null;
}): string {
  const parts: string[] = [];
  if (m.input_tokens !== null || m.output_tokens !== null)
    parts.push(`${formatCount(m.input_tokens ?? 0)} in · ${formatCount(m.output_tokens ?? 0)} out tokens`);
  if (m.model !== null) parts.push(m.model);
  if (m.cost_usd !== null) parts.push(formatUsd(m.cost_usd));
  return parts.join(" · ");
}

/** Durations read the same on pages and in the PR summary: one formatter. */
export const formatDuration = formatSeconds;

export function formatTime(iso: string | null): string {
  return iso ? `${iso.slice(0, 16).replace("T", " ")} UTC` : "";
}

const COMPACT_UNITS: readonly [number, string][] = [
  [1e9, "B"],
  [1e6, "M"],
  [1e3, "k"],
];

/** Short counts for tight places: 999, 1.2k, 12k, 3.4M (rounded down, so 999,999 is 999k, never 1000k). */
export function formatCompact(n: number): string {
  const whole = Math.round(n);
  for (const [size, unit] of COMPACT_UNITS) {
    if (Math.abs(whole) < size) continue;
    const scaled = whole / size;
    const shown = Math.abs(scaled) < 10 ? Math.trunc(scaled * 10) / 10 : Math.trunc(scaled);
    return `${shown}${unit}`;
  }
  return String(whole);
}

/**
 * A point in time: UTC in the text (what a page without script shows) and in the title; the
 * page script rewrites the text into the viewer's time zone.
 */
export function renderTime(iso: string) {
  return html`<time datetime="${iso}" title="${iso.slice(0, 19).replace("T", " ")} UTC">${formatTime(iso)}</time>`;
}

export const STATUS_LABEL: Record<string, string> = {
  active: "in progress",
  in_progress: "in progress",
  success: "success",
  partial_success: "partial success",
  failed: "failed",
};

/** The badge's shape, so a status reads without colour (and in print). */
const STATUS_SHAPE: Record<string, string> = {
  active: "◔",
  in_progress: "◔",
  success: "✓",
  partial_success: "◐",
  failed: "✕",
};

/**
 * A status as a badge: shape + word on a chip (its colour only repeats what the text says). A
 * finished status is what the agent reported, never a verdict, and says so: "✓ success (claimed)".
 */
export function statusBadge(status: string) {
  const claimed = status !== "active" && status !== "in_progress";
  return html`<span class="badge st st-${status}"><span class="shape" aria-hidden="true">${STATUS_SHAPE[status] ?? "•"}</span> ${STATUS_LABEL[status] ?? status}${
    claimed ? html` <span class="claim">(claimed)</span>` : ""
  }</span>`;
}

/**
 * Bidirectional-text controls (LRE…RLO, LRI…PDI, LRM, RLM, ALM) can make agent text read
 * differently from what it is ("Trojan Source"). They are shown as visible code points.
 */
const BIDI_CONTROLS = /[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/g;

export function revealBidiControls(text: string): string {
  return text.replace(BIDI_CONTROLS, (c) => `[U+${c.charCodeAt(0).toString(16).toUpperCase().padStart(4, "0")}]`);
}

/** Text for assistive technology only (the `sr-only` class): what a shape, a colour or a layout says to the eye. */
export const srOnly = (text: string) => html`<span class="sr-only">${text}</span>`;

/** A heading level in the page's outline (h1 is the page's title). */
export type Level = 2 | 3 | 4 | 5 | 6;

/** A field's heading at the level the outline needs there (h3 under a section, deeper under a task), styled as a small label. */
export const heading = (level: number, text: string) => html`${raw(`<h${level} class="label">`)}${text}${raw(`</h${level}>`)}`;
