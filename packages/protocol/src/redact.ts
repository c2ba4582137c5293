/**
 * @module redact
 * Secrets never leave the developer's machine: every text the helper sends that an agent or a
 * command wrote (command lines, decisions, issues, outcomes, milestones) passes through `redact`
 * first. Each known secret format is replaced by a marker naming what was removed
 * (`[redacted: GitHub token]`), so a reader knows something was there and what kind it was,
 * without the value. The edge applies the same rule to every tool call it receives
 * (`redactToolArguments`), so a client without the helper stores no secret either; on text the
 * helper redacted already it changes nothing.
 *
 * Every pattern is linear (no nested quantifiers, bounded repetitions), so a hostile text cannot
 * make redaction slow; the generic rule (a high-entropy value after `key`, `token`, `secret`,
 * `password`…) only fires on values that look random, so prose such as "the token is refreshed"
 * stays readable.
 */
import { HELPER_INPUT_NAMES } from "./wire-constants";

export interface SecretFormat {
  /** What the marker says was removed. */
  name: string;
  /** Global regex; the part to remove is the whole match, or the group named `secret`. */
  pattern: RegExp;
  /** For generic rules: accept the candidate only if this says it looks like a secret. */
  accept?: (candidate: string) => boolean;
}

const marker = (name: string) => `[redacted: ${name}]`;

/** Shannon entropy per character: random tokens score above ~3.5, words and identifiers below. */
export function entropyPerChar(text: string): number {
  if (text.length === 0) return 0;
  const counts = new Map<string, number>();
  for (const ch of text) counts.set(ch, (counts.get(ch) ?? 0) + 1);
  let bits = 0;
  for (const n of counts.values()) {
    const p = n / text.length;
    bits -= p * Math.log2(p);
  }
  return bits;
}

/** A value that looks generated: long enough, mixed characters, high entropy, not a path or a word list. */
function looksRandom(value: string): boolean {
  if (value.length < 16) return false;
  if (/^[a-z]+$/i.test(value) || /^\d+$/.test(value)) return false;
  if (value.includes("/") && !/^[A-Za-z0-9+/=]+$/.test(value)) return false;
  const classes = [/[a-z]/, /[A-Z]/, /\d/].filter((r) => r.test(value)).length;
  return classes >= 2 && entropyPerChar(value) >= 3.5;
}

/**
 * The formats redacted, most specific first (a GitHub token inside `token=…` is named as a GitHub
 * token). docs list them; the table test covers each.
 */
export const SECRET_FORMATS: readonly SecretFormat[] = [
  {
    name: "private key",
    pattern:
      /-----BEGIN (?:[A-Z0-9]+ ){0,3}PRIVATE KEY(?: BLOCK)?-----[\s\S]{0,16384}?(?:-----END (?:[A-Z0-9]+ ){0,3}PRIVATE KEY(?: BLOCK)?-----|$)/g,
  },
  { name: "AWS access key id", pattern: /\b(?:AKIA|ASIA|ABIA|ACCA)[0-9A-Z]{16}\b/g },
  {
    name: "AWS secret access key",
    pattern: /\baws_?secret_?access_?key\b["']?\s{0,8}[:=]\s{0,8}["']?(?<secret>[A-Za-z0-9/+=]{40})\b/gi,
  },
  { name: "GitHub token", pattern: /\b(?:gh[pousr]_[A-Za-z0-9]{36,255}|github_pat_[A-Za-z0-9_]{22,255})\b/g },
  { name: "GitLab token", pattern: /\bglpat-[A-Za-z0-9_-]{20,255}\b/g },
  { name: "Slack token", pattern: /\bxox[abposr]-[A-Za-z0-9-]{10,255}\b/g },
  { name: "Slack webhook URL", pattern: /https:\/\/hooks\.slack\.com\/services\/[A-Za-z0-9/_-]{20,255}/g },
  { name: "Stripe key", pattern: /\b(?:sk|rk|pk)_(?:live|test)_[A-Za-z0-9]{16,255}\b/g },
  { name: "Anthropic API key", pattern: /\bsk-ant-[A-Za-z0-9_-]{20,255}/g },
  { name: "OpenAI API key", pattern: /\bsk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{20,255}/g },
  { name: "Google API key", pattern: /\bAIza[0-9A-Za-z_-]{35}\b/g },
  { name: "npm token", pattern: /\bnpm_[A-Za-z0-9]{36}\b/g },
  { name: "PyPI token", pattern: /\bpypi-[A-Za-z0-9_-]{50,255}/g },
  { name: "Waymark token", pattern: /\b(?:wmk_[a-z0-9_-]{1,64}_[a-z2-7]{8,64}_[A-Za-z0-9_-]{16,128}|whsec_[A-Za-z0-9_-]{16,128})/g },
  { name: "JSON web token", pattern: /\beyJ[A-Za-z0-9_-]{8,4096}\.eyJ[A-Za-z0-9_-]{8,8192}\.[A-Za-z0-9_-]{8,4096}/g },
  { name: "URL credentials", pattern: /\b[a-z][a-z0-9+.-]{1,16}:\/\/[^\s/:@]{1,256}:(?<secret>[^\s/@]{1,256})@/gi },
  { name: "bearer token", pattern: /\b(?:Bearer|Basic|token)\s{1,4}(?<secret>[A-Za-z0-9._~+/-]{16,4096}=*)/g, accept: looksRandom },
  {
    name: "password",
    pattern:
      /\b[A-Za-z0-9_-]{0,32}(?:password|passwd|pwd)\b["']?\s{0,8}[:=]\s{0,8}(?<secret>"[^"\n]{1,512}"|'[^'\n]{1,512}'|[^\s"',;&|]{1,512})/gi,
  },
  {
    name: "secret value",
    pattern:
      /\b[A-Za-z0-9_.-]{0,64}(?:key|token|secret|credential|auth)[A-Za-z0-9_]{0,32}["']?\s{0,8}[:=]\s{0,8}["']?(?<secret>[A-Za-z0-9._~+/=-]{16,4096})/gi,
    accept: looksRandom,
  },
];

/** Where a secret was found and what kind it was. */
export interface Redaction {
  name: string;
}

/**
 * `text` with every secret replaced by its marker, and what was removed. A secret nested in
 * another match (a GitHub token after `token=`) is named by the first, most specific, format.
 */
export function redact(text: string, formats: readonly SecretFormat[] = SECRET_FORMATS): { text: string; redactions: Redaction[] } {
  const redactions: Redaction[] = [];
  let out = text;
  for (const format of formats) {
    out = out.replace(format.pattern, (match: string, ...rest: unknown[]) => {
      const groups = rest.at(-1) as Record<string, string | undefined> | undefined;
      const secret = typeof groups === "object" && groups ? groups.secret : undefined;
      if (secret !== undefined) {
        if (secret.startsWith("[redacted:")) return match;
        if (format.accept && !format.accept(secret.replace(/^["']|["']$/g, ""))) return match;
        redactions.push({ name: format.name });
        // Only the secret goes: what the pattern matched after it (the `@` of URL credentials) stays.
        const at = match.lastIndexOf(secret);
        return match.slice(0, at) + marker(format.name) + match.slice(at + secret.length);
      }
      if (format.accept && !format.accept(match)) return match;
      redactions.push({ name: format.name });
      return marker(format.name);
    });
  }
  return { text: out, redactions };
}

/**
 * Tool-argument fields sent and stored as written: ids and idempotency keys (a changed one would
 * name another record), areas (paths and globs), and the helper's own inputs (computed from git;
 * the commands in them were redacted when the hooks recorded them). Every other field, including
 * any a later version of a tool adds, is redacted: a field this list forgets is redacted, never
 * kept as written.
 */
const KEPT_FIELDS: ReadonlySet<string> = new Set(["idempotency_key", "areas", ...HELPER_INPUT_NAMES]);

const keptAsWritten = (field: string) => KEPT_FIELDS.has(field) || field.endsWith("_id");

/** A tool call's arguments with every agent-written text redacted, and what was removed. */
export function redactToolArguments(args: Record<string, unknown>): { args: Record<string, unknown>; redactions: Redaction[] } {
  const redactions: Redaction[] = [];
  const out: Record<string, unknown> = {};
  for (const [field, value] of Object.entries(args)) {
    if (keptAsWritten(field)) {
      out[field] = value;
      continue;
    }
    const redacted = redactDeep(value);
    redactions.push(...redacted.redactions);
    out[field] = redacted.value;
  }
  return { args: out, redactions };
}

/** What a tool result says when secrets were removed from the call (so the agent does not repeat them). */
export function redactionNote(redactions: readonly Redaction[], where: "before sending" | "before storing"): string {
  const kinds = [...new Set(redactions.map((r) => r.name))].join(", ");
  const count = `${redactions.length} secret${redactions.length === 1 ? "" : "s"} (${kinds})`;
  return `waymark: ${count} removed ${where}; the record shows [redacted: …] in their place.`;
}

/**
 * How deep `redactDeep` walks: deeper than any tool accepts (the endpoint refuses arguments nested
 * past 64 levels, by name), so a value nested thousands deep is left for that refusal instead of
 * exhausting the stack here.
 */
const REDACT_DEPTH = 128;

/** Redacts every string in a JSON value (tool arguments), keys left as they are. */
export function redactDeep<T>(value: T): { value: T; redactions: Redaction[] } {
  const redactions: Redaction[] = [];
  const walk = (v: unknown, depth: number): unknown => {
    if (typeof v === "string") {
      const result = redact(v);
      redactions.push(...result.redactions);
      return result.text;
    }
    if (depth >= REDACT_DEPTH) return v;
    if (Array.isArray(v)) return v.map((item) => walk(item, depth + 1));
    if (v !== null && typeof v === "object") return Object.fromEntries(Object.entries(v).map(([k, item]) => [k, walk(item, depth + 1)]));
    return v;
  };
  return { value: walk(value, 0) as T, redactions };
}
