/**
 * @module terminal
 * What the helper prints is made safe for a terminal: text that came from elsewhere (an
 * endpoint's answer, a workflow's name, a path) may carry control characters that move the
 * cursor, recolour or clear the screen, or bidirectional overrides that reorder what is shown.
 * Plain text loses them; JSON output keeps them as \u escapes (still the same JSON value).
 */

/**
 * C0 controls but tab and newline, DEL, C1 controls, and the bidirectional embedding, override,
 * isolate and mark characters.
 */
const UNSAFE = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/g;

/** Text without the characters a terminal would act on instead of showing. */
export function printable(text: string): string {
  return text.replace(UNSAFE, "");
}

/**
 * JSON text with the same characters written as \u escapes (JSON.stringify leaves C1 and bidi
 * characters raw). They only occur inside strings, so the value is unchanged.
 */
export function printableJson(text: string): string {
  return text.replace(UNSAFE, (char) => `\\u${char.charCodeAt(0).toString(16).padStart(4, "0")}`);
}
