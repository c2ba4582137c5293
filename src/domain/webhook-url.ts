/**
 * @module domain/webhook-url
 * Which URLs a webhook may target: absolute http(s) without credentials, bounded in length, and
 * never a private, loopback or link-local host (domain/network) unless the deployment allows it.
 */
import { LIMITS } from "../limits";
import { isSpecialPurposeHost } from "./network";

/** Why `url` cannot be a webhook target, or null. */
export function webhookUrlProblem(url: unknown, allowPrivate: boolean): string | null {
  if (typeof url !== "string" || url.length === 0) return "url: is required (an http(s) URL)";
  if (url.length > LIMITS.WEBHOOK_URL) return `url: must be at most ${LIMITS.WEBHOOK_URL} characters`;
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return "url: must be an absolute http(s) URL";
  }
  if (parsed.protocol !== "https:" && parsed.protocol !== "http:") return "url: must use http or https";
  if (parsed.username || parsed.password) return "url: must not contain credentials";
  if (!allowPrivate && isSpecialPurposeHost(parsed.hostname)) {
    return "url: private, loopback and link-local hosts are refused (set WAYMARK_WEBHOOK_ALLOW_PRIVATE=true to allow them)";
  }
  return null;
}
