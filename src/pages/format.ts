/** Display formats shared by the server page, the Markdown export and (mirrored) the live client script. */
export function formatDuration(seconds: number | null): string {
  if (seconds === null) return "";
  const s = Math.max(0, Math.round(seconds));
  if (s < 60) return `${s}s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m}m ${String(s % 60).padStart(2, "0")}s`;
  const h = Math.floor(m / 60);
  return `${h}h ${String(m % 60).padStart(2, "0")}m`;
}

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
