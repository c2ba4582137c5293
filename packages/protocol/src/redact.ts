/**
 * @module redact
 * Secrets never leave the developer's machine, and only secrets are removed. Every string and
 * every object key the helper sends passes through this rule first: what an agent wrote (names,
 * goals, decisions, issues, outcomes, metadata and its keys, the commands it says it ran) and what
 * the helper computed (command lines the hooks observed, warnings, commit subjects, branch names,
 * paths). Each known secret format is replaced by a marker naming what was removed
 * (`[redacted: GitHub token]`), so a reader knows something was there and what kind it was,
 * without the value. The edge applies the same rule to every tool call it receives
 * (`redactToolArguments`), so a client without the helper stores no secret either; on text the
 * helper redacted already it changes nothing (the rule is idempotent), so a device's signature over
 * redacted data still verifies at the edge.
 *
 * Encodings: a secret is found quoted, JSON-escaped (`{\"token\":\"…\"}`), after a percent-encoded
 * separator (`token%3D…`, `password%3A…`), and inside base64 (a `Basic` credential, or a base64 run
 * whose decoded text holds a secret in a specific format).
 *
 * Only secrets: text that names where a secret lives stays as written (`apiKey:
 * process.env.OPENAI_API_KEY`, `password=${PASSWORD}`, `token: config.token`, `getPassword()`,
 * `password: string`), and the generic rules (a value after `key`, `token`, `secret`, `password`…)
 * fire only on literal values; the `key`/`token` rule only on values that look generated, not on
 * words (`"Waymark-Share-Token"`). Measured on a corpus of real code and prose
 * (client-helper/test/redaction-corpus.test.ts).
 *
 * Every pattern is linear (no nested quantifiers, bounded repetitions), so a hostile text cannot
 * make redaction slow; a text without any of the formats' anchors (`TRIGGER`) is not scanned further.
 */
import { HELPER_INPUT_NAMES } from "./wire-constants";

export interface SecretFormat {
  /** What the marker says was removed. */
  name: string;
  /** Global regex; the part to remove is the whole match, or the group named `secret`. */
  pattern: RegExp;
  /**
   * For generic rules: accept the candidate only if this says it is a secret (`after`: the text that
   * follows the match; `quoted`: the value stood in quotes).
   */
  accept?: (candidate: string, after: string, quoted: boolean) => boolean;
}

const marker = (name: string) => `[redacted: ${name}]`;

/** Shannon entropy per character: generated tokens score above 3 (hex ~3.7, base64 ~4.5), repeated characters below. */
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

/** Two-letter words that join identifiers (`bytesToBase64Url`, `userId`): any other two letters read as generated. */
const SHORT_WORDS = new Set([
  "to",
  "of",
  "id",
  "by",
  "is",
  "at",
  "on",
  "in",
  "up",
  "or",
  "as",
  "db",
  "io",
  "ui",
  "os",
  "ok",
  "an",
  "do",
  "if",
  "it",
  "my",
  "no",
  "so",
  "js",
  "ts",
]);

/** One part of a name: a number, or letters (with a short number after: `Base64`, `token123`) that could be a word or an abbreviation. */
function wordPart(part: string): boolean {
  if (/^\d+$/.test(part)) return part.length <= 8;
  const letters = /^([A-Za-z]{2,})\d{0,3}$/.exec(part)?.[1];
  if (letters === undefined) return false;
  if (letters.length <= 2) return SHORT_WORDS.has(letters.toLowerCase());
  if (letters.length <= 4) return /[aeiouy]/i.test(letters) || letters === letters.toUpperCase();
  const vowels = (letters.match(/[aeiouy]/gi)?.length ?? 0) / letters.length;
  return vowels >= (letters.length >= 8 ? 0.25 : 0.01) && !/[^aeiouy]{5}/i.test(letters);
}

/**
 * Whether a value reads as words (a header name `Waymark-Share-Token`, `personal-access-token123`,
 * `MINIFLARE_R2_S3_CREDENTIALS`, an identifier) rather than as generated characters: split at
 * separators and case changes, nearly all of it is numbers and letters that could be words. A
 * generated token mixes digits into its letters and changes case every character or two: of random
 * tokens of each common shape, at most 0.5% read as words (client-helper/test/redaction-corpus.test.ts).
 */
function madeOfWords(value: string): boolean {
  const parts: { length: number; word: boolean }[] = [];
  for (const chunk of value.replace(/\d+$/, "").split(/[-_.~+/=]+/)) {
    if (chunk === "") continue;
    // A letter (with a digit or two) between separators is a name's part: `x-`, `R2_`, `d1-`.
    if (/^[A-Za-z]\d{0,2}$/.test(chunk)) parts.push({ length: chunk.length, word: true });
    else
      for (const sub of chunk.split(/(?<=[a-z])(?=[A-Z])|(?<=[A-Z\d])(?=[A-Z][a-z])/))
        parts.push({ length: sub.length, word: wordPart(sub) });
  }
  const total = parts.reduce((n, p) => n + p.length, 0);
  const inWords = parts.reduce((n, p) => n + (p.word ? p.length : 0), 0);
  const misses = parts.filter((p) => !p.word).length;
  return parts.length > 0 && inWords >= 0.75 * total && misses <= Math.max(1, parts.length / 4);
}

/** An alphabet written out (`ABC…xyz0123456789+/`, `0123456789abcdef`): half its neighbours or more are consecutive. */
function sequence(value: string): boolean {
  let steps = 0;
  for (let i = 1; i < value.length; i++) if (value.charCodeAt(i) - value.charCodeAt(i - 1) === 1) steps++;
  return steps >= (value.length - 1) / 2;
}

/** A value that looks generated: long enough, mixed characters, high entropy, not a path or words. */
function looksRandom(value: string): boolean {
  if (value.length < 16) return false;
  // One case of letters alone is a word (mixed case is left to `madeOfWords`: camelCase reads as words, random case does not).
  if (/^[a-z]+$/.test(value) || /^[A-Z]+$/.test(value) || /^\d+$/.test(value)) return false;
  if (value.includes("/") && !/^[A-Za-z0-9+/=]+$/.test(value)) return false;
  const classes = [/[a-z]/, /[A-Z]/, /\d/].filter((r) => r.test(value)).length;
  return classes >= 2 && entropyPerChar(value) >= 3 && !madeOfWords(value) && !sequence(value);
}

/**
 * Text that names where a secret lives rather than holding one: an environment variable or a
 * template (`$PASSWORD`, `${PASSWORD}`, `$(pass show db)`, `%PASSWORD%`, `{{ .Values.password }}`,
 * `<password>`, `[REDACTED]`), a member chain (`process.env.OPENAI_API_KEY`, `config.token`,
 * `self.password`), or a name called or indexed (`getPassword()`, `os.environ["KEY"]`).
 */
function namesAPlace(value: string, after: string): boolean {
  if (/^(?:\$[{(]?[A-Za-z_]|%[A-Za-z_]\w*%|\{\{|<[^<>]*>$|\[[^\]]*\]$)/.test(value)) return true;
  const chain = /^[A-Za-z_$][\w$]*(?:(?:\?\.|\.|::|->)[A-Za-z_$][\w$]*)*/.exec(value)?.[0] ?? "";
  if (chain === "") return false;
  // Called, indexed, or a parameter list (`args => …`).
  if (/^(?:[([]|\?\.|\s*=>)/.test(value.slice(chain.length) || after)) return true;
  return chain === value && /\.|::|->/.test(chain);
}

/** Words that stand in for a secret in examples and docs: `password`, `xxx`, `***`, `your-token-here`. */
const PLACEHOLDER =
  /^(?:x{3,}|\*{3,}|\.{3,}|…|(?:your|my|the|some|an?)?[-_ ]?(?:pass(?:word)?|passwd|pwd|pw|secret|token|key|api[-_]?key|changeme|example|placeholder|redacted|value)s?(?:[-_ ]?here)?)$/i;

/** A version number (`"pbkdf2-password": "1.2.1"` in a package.json) or a hex constant (`USERNAME_PASSWORD: 0x02`): never a password. */
const VERSION = /^(?:[~^]?\d+\.\d+(?:\.\d+)?(?:[-+][\w.]+)?|0x[0-9a-f]+)$/i;

/** In code, a bare word after `password:` is a type (`password: string`) or a keyword, not a password. */
const TYPE_WORDS = new Set([
  "string",
  "str",
  "number",
  "int",
  "integer",
  "bool",
  "boolean",
  "null",
  "none",
  "nil",
  "undefined",
  "true",
  "false",
  "any",
  "unknown",
  "bytes",
  "text",
  "varchar",
  "char",
  "object",
  "optional",
  "required",
  "empty",
  // Keywords: `const pwd = await this.pwd()`, `PASSWORD: void 0`.
  "await",
  "new",
  "this",
  "self",
  "super",
  "function",
  "async",
  "yield",
  "typeof",
  "lambda",
  "void",
  "return",
  "const",
  "let",
  "var",
  "def",
]);

/**
 * Whether a value after `password=` is a literal password. Quoted, it is (unless a placeholder or
 * a reference inside the quotes); bare, a name in code is not: a type or keyword, a constant
 * (`DB_PASSWORD`), a variable (`hashedPassword`, `db_pass`), a type (`URLPatternResult`).
 */
function passwordLiteral(raw: string, after: string): boolean {
  const quoted = /^(?:\\?["']|%2[27])/.test(raw);
  const value = raw.replace(/^(?:\\?["']|%2[27])|(?:\\?["']|%2[27])$/g, "");
  if (!/[A-Za-z0-9]/.test(value) || PLACEHOLDER.test(value) || namesAPlace(value, after) || VERSION.test(value)) return false;
  if (quoted) return true;
  // Bare: an expression (`(value) => …`, `[…]`, `{…}`), a placeholder (`<your password>`) or a generic type (`Promise<string>`).
  if (/^[([{<]/.test(value) || /^[A-Za-z_$][\w$]*</.test(value) || TYPE_WORDS.has(value.toLowerCase())) return false;
  if (!/^[A-Za-z_$][A-Za-z_$]*$/.test(value)) return true;
  const capitals = value.match(/[A-Z]/g)?.length ?? 0;
  const isName = value.includes("_") || /^[a-z]+[A-Z]/.test(value) || capitals >= 2;
  return !isName;
}

/** A generic value (after `key`, `token`, `Bearer`…) that is a secret: generated-looking, not a reference or a placeholder. */
const genericSecret = (value: string, after: string, quoted = false) =>
  looksRandom(value) && !PLACEHOLDER.test(value) && !namesAPlace(value, after) && !(!quoted && codeName(value, after));

/** An unquoted name that code goes on after (`key: zWorkersKvKeyName,`): a variable, not a value. */
const codeName = (value: string, after: string) => /^[A-Za-z_$][\w$]*$/.test(value) && /^\s*[,;)}\]]/.test(after);

/** The password in `scheme://user:password@host`, unless a placeholder or a reference (`${DB_PASSWORD}`). */
const urlPassword = (value: string, after: string) => !PLACEHOLDER.test(value) && !namesAPlace(value, after);

/** Where a specific format may start: a word boundary, or right after a percent-encoded byte (`token%3Dghp_…`). */
const START = String.raw`(?:\b|(?<=%[0-9A-Fa-f]{2}))`;
/** What sits between a name and its value: a quote (plain, JSON-escaped or percent-encoded), then `:` or `=` (or `%3A`, `%3D`). */
const ASSIGN = String.raw`(?:\\?["']|%2[27])?\s{0,8}(?:[:=]|%3[AaDd])\s{0,8}`;
const OPEN_QUOTE = String.raw`(?:\\?["']|%2[27])?`;
const pattern = (source: string, flags = "g") => new RegExp(source, flags);

/** A `Basic` credential: base64 of `user:password`. */
function basicCredential(value: string): boolean {
  const text = decodedText(value);
  return text !== null && /^[^:\s]{1,256}:\S{1,512}$/.test(text) && !PLACEHOLDER.test(text.slice(text.indexOf(":") + 1));
}

/** Base64 (standard or URL alphabet) decoded, when it is printable text; null otherwise. */
function decodedText(value: string): string | null {
  const normal = value.replace(/-/g, "+").replace(/_/g, "/").replace(/=+$/, "");
  if (normal.length % 4 === 1) return null;
  let binary: string;
  try {
    binary = atob(normal + "=".repeat((4 - (normal.length % 4)) % 4));
  } catch {
    return null;
  }
  return /^[\t\n\r\x20-\x7e]+$/.test(binary) ? binary : null;
}

/**
 * The formats redacted, most specific first (a GitHub token inside `token=…` is named as a GitHub
 * token). docs/evidence.md lists them; the corpus test measures each, in each encoding.
 */
export const SECRET_FORMATS: readonly SecretFormat[] = [
  {
    name: "private key",
    pattern:
      /-----BEGIN (?:[A-Z0-9]+ ){0,3}PRIVATE KEY(?: BLOCK)?-----[\s\S]{0,16384}?(?:-----END (?:[A-Z0-9]+ ){0,3}PRIVATE KEY(?: BLOCK)?-----|$)/g,
  },
  { name: "AWS access key id", pattern: pattern(String.raw`${START}(?:AKIA|ASIA|ABIA|ACCA)[0-9A-Z]{16}\b`) },
  {
    name: "AWS secret access key",
    pattern: pattern(
      String.raw`\baws_?secret_?access_?key\b${ASSIGN}${OPEN_QUOTE}(?<secret>(?:[A-Za-z0-9/+=]|%2[BbFf]|%3[Dd]){40,160})(?![A-Za-z0-9/+=%])`,
      "gi",
    ),
  },
  { name: "GitHub token", pattern: pattern(String.raw`${START}(?:gh[pousr]_[A-Za-z0-9]{36,255}|github_pat_[A-Za-z0-9_]{22,255})\b`) },
  { name: "GitLab token", pattern: pattern(String.raw`${START}glpat-[A-Za-z0-9_-]{20,255}\b`) },
  { name: "Slack token", pattern: pattern(String.raw`${START}xox[abposr]-[A-Za-z0-9-]{10,255}\b`) },
  { name: "Slack webhook URL", pattern: /https:\/\/hooks\.slack\.com\/services\/[A-Za-z0-9/_-]{20,255}/g },
  { name: "Stripe key", pattern: pattern(String.raw`${START}(?:sk|rk|pk)_(?:live|test)_[A-Za-z0-9]{16,255}\b`) },
  { name: "Anthropic API key", pattern: pattern(`${START}sk-ant-[A-Za-z0-9_-]{20,255}`) },
  { name: "OpenAI API key", pattern: pattern(`${START}sk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{20,255}`) },
  { name: "Google API key", pattern: pattern(String.raw`${START}AIza[0-9A-Za-z_-]{35}\b`) },
  { name: "npm token", pattern: pattern(String.raw`${START}npm_[A-Za-z0-9]{36}\b`) },
  { name: "PyPI token", pattern: pattern(`${START}pypi-[A-Za-z0-9_-]{50,255}`) },
  {
    name: "Waymark token",
    pattern: pattern(`${START}(?:wmk_[a-z0-9_-]{1,64}_[a-z2-7]{8,64}_[A-Za-z0-9_-]{16,128}|whsec_[A-Za-z0-9_-]{16,128})`),
  },
  {
    name: "JSON web token",
    pattern: pattern(String.raw`${START}eyJ[A-Za-z0-9_-]{8,4096}\.eyJ[A-Za-z0-9_-]{8,8192}\.[A-Za-z0-9_-]{8,4096}`),
  },
  {
    name: "URL credentials",
    pattern: /\b[a-z][a-z0-9+.-]{1,16}:\/\/[^\s/:@]{1,256}:(?<secret>[^\s/@]{1,256})@/gi,
    accept: urlPassword,
  },
  {
    name: "Basic credentials",
    pattern: /\bBasic\s{1,4}(?<secret>[A-Za-z0-9+/]{4,4096}={0,2})(?![A-Za-z0-9+/=])/g,
    accept: basicCredential,
  },
  {
    name: "bearer token",
    pattern: /\b(?:Bearer|token)\s{1,4}(?<secret>[A-Za-z0-9._~+/-]{16,4096}=*)/g,
    accept: genericSecret,
  },
  {
    name: "password",
    pattern: pattern(
      String.raw`\b[A-Za-z0-9_-]{0,32}(?:password|passwd|pwd)\b${ASSIGN}(?<secret>\\?"[^"\n\\]{1,512}\\?"|'[^'\n]{1,512}'|%2[27][^%\s]{1,512}%2[27]|(?:[^\s"'\`,;&|\\]|\\(?!["'])){1,512})`,
      "gi",
    ),
    accept: passwordLiteral,
  },
  {
    name: "secret value",
    pattern: pattern(
      String.raw`\b[A-Za-z0-9_.-]{0,64}(?:key|token|secret|credential|auth)[A-Za-z0-9_]{0,32}${ASSIGN}${OPEN_QUOTE}(?<secret>[A-Za-z0-9._~+/=-]{16,4096})`,
      "gi",
    ),
    accept: genericSecret,
  },
];

/** A run of base64 long enough to hold a token: decoded, it is checked for the specific formats. */
const BASE64_RUN = /(?<![A-Za-z0-9+/_-])[A-Za-z0-9+/_-]{24,8192}={0,2}(?![A-Za-z0-9+/=_-])/g;
/** The formats named by their own shape (not the generic rules): what a decoded base64 run is checked for. */
const SPECIFIC_FORMATS = SECRET_FORMATS.filter((format) => format.accept === undefined);

/**
 * Every match of every format contains one of these (case aside): a text without any is not run
 * through each pattern (most paths and command lines), only through the base64 check.
 */
const TRIGGER =
  /PRIVATE KEY|A[SK]IA|ABIA|ACCA|gh[pousr]_|github_pat_|glpat-|xox[abposr]-|hooks\.slack|_(?:live|test)_|sk-|AIza|npm_|pypi-|wmk_|whsec_|eyJ|:\/\//i;
/** The generic rules' names, which fire only with a separator (`:`, `=`, a space, or their encodings) somewhere after them. */
const GENERIC_TRIGGER = /(?:bearer|basic|token|pass|pwd|key|secret|credential|auth)[\s\S]{0,48}?(?:[:=\s]|%3[AaDd])/i;

/** Whether any format can match: most paths and command lines are not run through each pattern. */
const mayHoldSecret = (text: string) => TRIGGER.test(text) || GENERIC_TRIGGER.test(text);

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
  const all = formats === SECRET_FORMATS;
  let out = text;
  for (const format of all && !mayHoldSecret(text) ? [] : formats) {
    out = out.replace(format.pattern, (match: string, ...rest: unknown[]) => {
      // (match, ...captures, offset, whole text, named groups when the pattern has any)
      const named = typeof rest.at(-1) === "object" ? (rest.at(-1) as Record<string, string | undefined>) : undefined;
      const whole = String(rest.at(named ? -2 : -1));
      const offset = Number(rest.at(named ? -3 : -2));
      const after = whole.slice(offset + match.length, offset + match.length + 16);
      const secret = named?.secret;
      if (secret !== undefined) {
        if (secret.startsWith("[redacted:")) return match;
        const before = match.slice(0, match.lastIndexOf(secret));
        if (format.accept && !format.accept(secret, after, /(?:["'`]|%2[27])$/.test(before))) return match;
        redactions.push({ name: format.name });
        // Only the secret goes: what the pattern matched after it (the `@` of URL credentials) stays.
        const at = match.lastIndexOf(secret);
        return match.slice(0, at) + marker(format.name) + match.slice(at + secret.length);
      }
      if (format.accept && !format.accept(match, after, false)) return match;
      redactions.push({ name: format.name });
      return marker(format.name);
    });
  }
  if (all) out = redactBase64(out, redactions);
  return { text: out, redactions };
}

/** Runs of base64 whose decoded text holds a secret in a specific format: the whole run goes. */
function redactBase64(text: string, redactions: Redaction[]): string {
  if (text.length < 24) return text;
  return text.replace(BASE64_RUN, (run) => {
    // Base64 of text mixes cases; a name of letters, dashes and slashes (a path) is not decoded.
    if (!/[A-Z]/.test(run) || !/[a-z]/.test(run)) return run;
    const decoded = decodedText(run);
    if (decoded === null) return run;
    const inner = redact(decoded, SPECIFIC_FORMATS).redactions[0];
    if (!inner) return run;
    redactions.push({ name: inner.name });
    return marker(`${inner.name}, base64`);
  });
}

/**
 * Tool-argument fields sent and stored as written: ids (a changed one would name another record)
 * and idempotency keys (letters, digits and `._:-` only, never shown: a changed one would merge
 * distinct calls). Every other field, including any a later version of a tool adds and the
 * helper's own inputs, is redacted, keys included: a field this list forgets is redacted, never
 * kept as written.
 */
const keptAsWritten = (field: string) => field === "idempotency_key" || field.endsWith("_id");

/**
 * Fields of the helper's inputs (snapshot, changes, repository) whose schema fixes their format
 * (hex object ids and digests, octal modes, base64url keys, nonces and signatures, versions, enums):
 * they cannot hold a secret in a listed format, and a device's signature covers their exact bytes.
 * Only inside the helper's inputs, whose objects are strict (no key an agent chose).
 */
const FORMAT_BOUND_FIELDS: ReadonlySet<string> = new Set([
  "blob",
  "mode",
  "head",
  "start_head",
  "sha",
  "fingerprint",
  "digest",
  "key",
  "nonce",
  "start_nonce",
  "signature",
  "version",
  "type",
  "kind",
  "price_table_date",
]);

/** A tool call's arguments with every string and key redacted (the helper's inputs too), and what was removed. */
export function redactToolArguments(args: Record<string, unknown>): { args: Record<string, unknown>; redactions: Redaction[] } {
  const redactions: Redaction[] = [];
  const out: Record<string, unknown> = {};
  for (const [field, value] of Object.entries(args)) {
    if (keptAsWritten(field)) {
      out[field] = value;
      continue;
    }
    const redacted = HELPER_INPUT_NAMES.has(field) ? redactHelperInput(value) : redactDeep(value);
    redactions.push(...redacted.redactions);
    // A top-level field's name is the tool's own (refused by the schema if unknown), never a secret's place.
    out[field] = redacted.value;
  }
  return { args: out, redactions };
}

/**
 * What the helper computed (a snapshot, changes, the repository), redacted as it is sent: every
 * string and key, but the fields whose format the wire schema fixes. The helper redacts before it
 * signs, so the edge's redaction of the same data changes nothing and the signature verifies.
 */
export function redactHelperInput<T>(value: T): { value: T; redactions: Redaction[] } {
  return redactDeep(value, FORMAT_BOUND_FIELDS);
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

/**
 * Redacts every string in a JSON value, and every object key: a key that held a secret becomes its
 * marker (`[redacted: GitHub token]`, then `… 2`, `… 3` when one object has several), so no two
 * keys collide. `kept`: keys whose string values stay as written (the helper's format-bound fields).
 */
export function redactDeep<T>(value: T, kept: ReadonlySet<string> = new Set()): { value: T; redactions: Redaction[] } {
  const redactions: Redaction[] = [];
  const text = (s: string) => {
    const result = redact(s);
    redactions.push(...result.redactions);
    return result.text;
  };
  // Keys repeat in every entry of a list (`path`, `before`, `mode`…): each name is read once.
  const keys = new Map<string, string>();
  const keyText = (key: string) => {
    const known = keys.get(key);
    if (known !== undefined && known === key) return key;
    const redactedKey = text(key);
    if (keys.size < 1000) keys.set(key, redactedKey);
    return redactedKey;
  };
  // Copy on write: a list or object with nothing to redact is returned as it is (the helper's lists
  // hold tens of thousands of entries, nearly always without a secret).
  const walk = (v: unknown, depth: number): unknown => {
    if (typeof v === "string") return text(v);
    if (depth >= REDACT_DEPTH || v === null || typeof v !== "object") return v;
    if (Array.isArray(v)) {
      let copy: unknown[] | null = null;
      for (let i = 0; i < v.length; i++) {
        const next = walk(v[i], depth + 1);
        if (copy === null && next !== v[i]) copy = v.slice(0, i);
        copy?.push(next);
      }
      return copy ?? v;
    }
    const source = v as Record<string, unknown>;
    const keys = Object.keys(source);
    let out: Record<string, unknown> | null = null;
    for (let i = 0; i < keys.length; i++) {
      const key = keys[i] as string;
      const item = source[key];
      const name = keyText(key);
      const next = typeof item === "string" ? (kept.has(key) ? item : text(item)) : walk(item, depth + 1);
      if (out === null && (name !== key || next !== item)) {
        out = {};
        for (const earlier of keys.slice(0, i)) out[earlier] = source[earlier];
      }
      if (out !== null) out[uniqueKey(name, out)] = next;
    }
    return out ?? source;
  };
  return { value: walk(value, 0) as T, redactions };
}

/** `name`, or `name 2`, `name 3`… when the object already has it (two keys redacted to one marker). */
function uniqueKey(name: string, taken: Record<string, unknown>): string {
  if (!Object.hasOwn(taken, name)) return name;
  for (let n = 2; ; n++) if (!Object.hasOwn(taken, `${name} ${n}`)) return `${name} ${n}`;
}
