/**
 * @module pages/format
 * Display formats shared by the server page, the dashboard and the Markdown export.
 */
import { formatSeconds } from "@waymark/protocol/summary";

/** Usage reported at complete_task: "1200 in · 300 out tokens · model · $0.0123". */
export function formatUsage(m: {
  input_tokens: number | null;
  output_tokens: number | null;
  model: string | null;
  cost_usd: number | null;
}): string {
  const parts: string[] = [];
  if (m.input_tokens !== null || m.output_tokens !== null) parts.push(`${m.input_tokens ?? 0} in · ${m.output_tokens ?? 0} out tokens`);
  if (m.model !== null) parts.push(m.model);
  if (m.cost_usd !== null) parts.push(`$${m.cost_usd.toFixed(4)}`);
  return parts.join(" · ");
}

/** Durations read the same on pages and in the PR summary: one formatter. */
export const formatDuration = formatSeconds;

export function formatTime(iso: string | null): string {
  return iso ? `${iso.slice(0, 16).replace("T", " ")} UTC` : "";
}

export const STATUS_LABEL: Record<string, string> = {
  active: "in progress",
  in_progress: "in progress",
  success: "success",
  partial_success: "partial success",
  failed: "failed",
};

/**
 * Bidirectional-text controls (LRE…RLO, LRI…PDI, LRM, RLM, ALM) can make agent text read
 * differently from what it is ("Trojan Source"). They are shown as visible code points.
 */
const BIDI_CONTROLS = /[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/g;

export function revealBidiControls(text: string): string {
  return text.replace(BIDI_CONTROLS, (c) => `[U+${c.charCodeAt(0).toString(16).toUpperCase().padStart(4, "0")}]`);
}
