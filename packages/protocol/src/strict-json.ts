/**
 * @module strict-json
 * JSON read so that every parser would read the same thing, for the files `waymark verify`
 * trusts nothing else about. RFC 8259 leaves some inputs to the parser: an object with the same
 * member twice (most parsers keep the last, some the first, some refuse), a string with half of a
 * UTF-16 surrogate pair (some replace it, some refuse), a number beyond double precision or
 * written in a form that reads as another type elsewhere (`1.0` is a float in Python and `1` in
 * JavaScript; `9007199254740993` is a bigint to some). A forger who puts a second `"tasks"` member
 * in an export shows one record to one reader and another to the next. So such input is refused,
 * naming where and why: members must be unique (compared after unescaping), strings well-formed
 * Unicode, numbers written exactly as JavaScript writes them (the form the edge writes: shortest
 * round trip, no `-0`, no leading `+`, nothing that overflows), no byte-order mark, nesting at
 * most MAX_DEPTH deep. The text is checked by this scanner and then parsed by JSON.parse (which
 * then cannot disagree with it: the scanner accepts a subset of what JSON.parse accepts).
 */

/** How deep objects and arrays may nest (a Waymark export nests about ten deep). */
const MAX_DEPTH = 256;

export class StrictJsonError extends Error {
  override name = "StrictJsonError";
  constructor(
    readonly reason: string,
    readonly line: number,
    readonly column: number,
  ) {
    super(`line ${line}, column ${column}: ${reason}`);
  }
}

/** Bytes as UTF-8, refusing what is not (a decoder would otherwise replace it, each its own way) and a byte-order mark. */
export function strictUtf8(bytes: Uint8Array): string {
  let text: string;
  try {
    text = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true }).decode(bytes);
  } catch {
    throw new StrictJsonError("not UTF-8: some bytes are not a character, and parsers replace them differently", 1, 1);
  }
  return text;
}

/** The value of `text`, or a StrictJsonError saying where its meaning would depend on the parser. */
export function strictJsonParse(text: string): unknown {
  new Scanner(text).document();
  return JSON.parse(text);
}

const NUMBER = /-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/y;
/** A run of characters a string holds as they are (no quote, backslash, control character or surrogate): skipped at once. */
const PLAIN = /[^"\\\u0000-\u001f\ud800-\udfff]*/y;
/** JSON's whitespace. */
const SPACE = /[ \t\n\r]*/y;
const HEX4 = /^[0-9a-fA-F]{4}$/;

class Scanner {
  private at = 0;

  constructor(private readonly text: string) {}

  document(): void {
    if (this.text.charCodeAt(0) === 0xfeff) this.fail("a byte-order mark before the JSON: some parsers skip it, others refuse it");
    this.space();
    this.value(0);
    this.space();
    if (this.at < this.text.length) this.fail("more after the JSON value: a second value or garbage");
  }

  private fail(reason: string, at = this.at): never {
    const before = this.text.slice(0, at);
    const line = before.split("\n").length;
    throw new StrictJsonError(reason, line, at - before.lastIndexOf("\n"));
  }

  private space(): void {
    SPACE.lastIndex = this.at;
    SPACE.test(this.text);
    this.at = SPACE.lastIndex;
  }

  private value(depth: number): void {
    const c = this.text[this.at];
    if (c === "{") this.object(depth + 1);
    else if (c === "[") this.array(depth + 1);
    else if (c === '"') this.string();
    else if (c === "t") this.literal("true");
    else if (c === "f") this.literal("false");
    else if (c === "n") this.literal("null");
    else if (c === "-" || (c !== undefined && c >= "0" && c <= "9")) this.number();
    else this.fail(c === undefined ? "the JSON ends where a value was expected" : `${JSON.stringify(c)} where a value was expected`);
  }

  private literal(word: string): void {
    if (!this.text.startsWith(word, this.at)) this.fail(`not JSON: expected ${word}`);
    this.at += word.length;
  }

  private number(): void {
    NUMBER.lastIndex = this.at;
    const match = NUMBER.exec(this.text);
    if (!match) this.fail("not a JSON number");
    const written = match[0];
    // The one form every reader agrees on: the value JavaScript reads, written back the same way.
    const canonical = JSON.stringify(Number(written));
    if (canonical !== written) {
      this.fail(
        `the number ${written} is not written as JavaScript writes its value (${canonical}): it reads differently in other parsers (precision, integer or float)`,
      );
    }
    this.at += written.length;
  }

  /** A string; returns its value when `decode` (member names, to compare them). */
  private string(decode = false): string {
    const start = this.at;
    this.at++;
    let escaped = false;
    for (;;) {
      PLAIN.lastIndex = this.at;
      PLAIN.test(this.text);
      this.at = PLAIN.lastIndex;
      const c = this.text.charCodeAt(this.at);
      if (Number.isNaN(c)) this.fail("a string that never ends", start);
      if (c === 0x22) break;
      if (c < 0x20) this.fail("a control character inside a string (it must be escaped)");
      if (c === 0x5c) {
        escaped = true;
        this.escape();
        continue;
      }
      if (c >= 0xd800 && c <= 0xdbff) {
        const next = this.text.charCodeAt(this.at + 1);
        if (!(next >= 0xdc00 && next <= 0xdfff)) this.fail("half of a UTF-16 surrogate pair inside a string");
        this.at += 2;
        continue;
      }
      if (c >= 0xdc00 && c <= 0xdfff) this.fail("half of a UTF-16 surrogate pair inside a string");
      this.at++;
    }
    this.at++;
    if (!decode) return "";
    const raw = this.text.slice(start, this.at);
    return escaped ? (JSON.parse(raw) as string) : raw.slice(1, -1);
  }

  /** After a backslash: a valid escape, and `\u` escapes of surrogates only in pairs. */
  private escape(): void {
    const kind = this.text[this.at + 1];
    if (kind !== undefined && '"\\/bfnrt'.includes(kind)) {
      this.at += 2;
      return;
    }
    if (kind !== "u") this.fail(`an unknown escape \\${kind ?? ""} inside a string`);
    const unit = this.hex(this.at + 2);
    if (unit >= 0xdc00 && unit <= 0xdfff) this.fail("an escaped half of a UTF-16 surrogate pair (a lone \\udc00–\\udfff)");
    if (unit >= 0xd800 && unit <= 0xdbff) {
      const low = this.text.startsWith("\\u", this.at + 6) ? this.hex(this.at + 8) : -1;
      if (!(low >= 0xdc00 && low <= 0xdfff)) this.fail("an escaped half of a UTF-16 surrogate pair (a \\ud800–\\udbff without its pair)");
      this.at += 12;
      return;
    }
    this.at += 6;
  }

  private hex(at: number): number {
    const digits = this.text.slice(at, at + 4);
    if (!HEX4.test(digits)) this.fail("\\u must be followed by four hex digits", at);
    return Number.parseInt(digits, 16);
  }

  private object(depth: number): void {
    if (depth > MAX_DEPTH) this.fail(`nested more than ${MAX_DEPTH} deep`);
    const start = this.at;
    this.at++;
    this.space();
    if (this.text[this.at] === "}") {
      this.at++;
      return;
    }
    const names = new Set<string>();
    for (;;) {
      if (this.text[this.at] !== '"') this.fail("a member name (a string) was expected");
      const nameAt = this.at;
      const name = this.string(true);
      if (names.has(name)) {
        this.fail(
          `the member ${JSON.stringify(name)} appears twice in one object (the object starts at ${this.where(start)}): parsers keep the first, the last or refuse`,
          nameAt,
        );
      }
      names.add(name);
      this.space();
      if (this.text[this.at] !== ":") this.fail("':' was expected after a member name");
      this.at++;
      this.space();
      this.value(depth);
      this.space();
      const c = this.text[this.at];
      this.at++;
      if (c === "}") return;
      if (c !== ",") this.fail("',' or '}' was expected", this.at - 1);
      this.space();
    }
  }

  private array(depth: number): void {
    if (depth > MAX_DEPTH) this.fail(`nested more than ${MAX_DEPTH} deep`);
    this.at++;
    this.space();
    if (this.text[this.at] === "]") {
      this.at++;
      return;
    }
    for (;;) {
      this.value(depth);
      this.space();
      const c = this.text[this.at];
      this.at++;
      if (c === "]") return;
      if (c !== ",") this.fail("',' or ']' was expected", this.at - 1);
      this.space();
    }
  }

  private where(at: number): string {
    const before = this.text.slice(0, at);
    return `line ${before.split("\n").length}, column ${at - before.lastIndexOf("\n")}`;
  }
}
