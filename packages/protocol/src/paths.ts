/**
 * @module paths
 * The rules for repository-relative paths shared by the helper and the edge: what a valid
 * path is, how a path that is not UTF-8 travels as text without losing a byte, how it is
 * shown to people, and the one order paths are sorted in.
 *
 * File names are bytes. A name that is valid UTF-8 travels as that text, unchanged. Any
 * other name travels in the escaped form: a leading "/" (no repository-relative path can
 * start with one) followed by the bytes, where printable ASCII other than "%" stands for
 * itself and every other byte is "%" and two uppercase hex digits. Every name has exactly
 * one wire form, so equal names always compare equal.
 */

/** Git refuses longer paths on most platforms (PATH_MAX); anything longer is not a real observation. */
export const MAX_PATH_BYTES = 4096;

/** Marks the escaped form; a repository-relative path never starts with it. */
export const ESCAPED_PATH_PREFIX = "/";

const SLASH = 0x2f;
const PERCENT = 0x25;
const HEX = "0123456789ABCDEF";
const strictUtf8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });
const utf8 = new TextEncoder();

/** True for a wire path in the escaped form (its name is not valid UTF-8). */
export function isEscapedPath(path: string): boolean {
  return path.startsWith(ESCAPED_PATH_PREFIX);
}

/** The one wire form of a file name given as bytes (git's -z output, a directory entry). */
export function encodePathBytes(bytes: Uint8Array): string {
  try {
    return strictUtf8.decode(bytes);
  } catch {
    return escapeBytes(bytes);
  }
}

function escapeBytes(bytes: Uint8Array): string {
  let out = ESCAPED_PATH_PREFIX;
  for (const byte of bytes) {
    if (byte >= 0x20 && byte < 0x7f && byte !== PERCENT) out += String.fromCharCode(byte);
    else out += `%${HEX[byte >> 4]}${HEX[byte & 15]}`;
  }
  return out;
}

/** The bytes a wire path names; null when an escaped path is malformed. */
export function decodeWirePath(path: string): Uint8Array | null {
  if (!isEscapedPath(path)) return utf8.encode(path);
  const bytes: number[] = [];
  for (let index = ESCAPED_PATH_PREFIX.length; index < path.length; index++) {
    const unit = path.charCodeAt(index);
    if (unit === PERCENT) {
      const value = hexByte(path, index + 1);
      if (value === null) return null;
      bytes.push(value);
      index += 2;
    } else if (unit >= 0x20 && unit < 0x7f) bytes.push(unit);
    else return null;
  }
  return Uint8Array.from(bytes);
}

function hexByte(text: string, at: number): number | null {
  const high = HEX.indexOf(text[at] ?? "");
  const low = HEX.indexOf(text[at + 1] ?? "");
  return high < 0 || low < 0 ? null : high * 16 + low;
}

/**
 * A wire path as people read it: valid UTF-8 as text, each byte that is not part of a valid
 * UTF-8 sequence as `\xE9` (the way git and most tools show such names).
 */
export function displayPath(path: string): string {
  if (!isEscapedPath(path)) return path;
  const bytes = decodeWirePath(path);
  if (bytes === null) return path;
  let out = "";
  let index = 0;
  while (index < bytes.length) {
    const length = utf8SequenceLength(bytes, index);
    if (length === 0) {
      out += `\\x${HEX[(bytes[index] as number) >> 4]}${HEX[(bytes[index] as number) & 15]}`;
      index++;
    } else {
      out += strictUtf8.decode(bytes.subarray(index, index + length));
      index += length;
    }
  }
  return out;
}

/** Length of the well-formed UTF-8 sequence starting at `at`, or 0 when there is none. */
function utf8SequenceLength(bytes: Uint8Array, at: number): number {
  const first = bytes[at] as number;
  if (first < 0x80) return 1;
  let length: number;
  let min: number;
  if (first >= 0xc2 && first <= 0xdf) [length, min] = [2, 0x80];
  else if (first >= 0xe0 && first <= 0xef) [length, min] = [3, 0x800];
  else if (first >= 0xf0 && first <= 0xf4) [length, min] = [4, 0x10000];
  else return 0;
  let codePoint = first & (0xff >> (length + 1));
  for (let offset = 1; offset < length; offset++) {
    const next = bytes[at + offset];
    if (next === undefined || (next & 0xc0) !== 0x80) return 0;
    codePoint = (codePoint << 6) | (next & 0x3f);
  }
  if (codePoint < min || codePoint > 0x10ffff || (codePoint >= 0xd800 && codePoint <= 0xdfff)) return 0;
  return length;
}

/**
 * A repo-relative path on the wire: non-empty, at most 4096 bytes, "/"-separated, no leading
 * "/", no "." or ".." segment, no empty segment, no NUL; text must be well-formed Unicode, and
 * an escaped path must be the one canonical escaped form of a name that is not valid UTF-8.
 * Backslashes, spaces, quotes, newlines and non-ASCII are legal: they are real file names.
 * Returns the first broken rule, or null if the path is valid.
 */
export function repoPathProblem(path: string): string | null {
  if (path.length === 0) return "must not be empty";
  if (isEscapedPath(path)) return escapedPathProblem(path);
  if (path.includes("\0")) return "must not contain NUL";
  const bytes = utf8Length(path);
  if (bytes === null) return "must be well-formed Unicode (no lone surrogate)";
  if (bytes > MAX_PATH_BYTES) return `must be at most ${MAX_PATH_BYTES} UTF-8 bytes (is ${bytes})`;
  return segmentProblem(path.split("/"));
}

function escapedPathProblem(path: string): string | null {
  const bytes = decodeWirePath(path);
  if (bytes === null || escapeBytes(bytes) !== path || bytes.length === 0) {
    return 'must be valid UTF-8 text, or "/" followed by the escaped bytes of a name that is not UTF-8 (printable ASCII but "%" as is, any other byte as %XX)';
  }
  // Valid UTF-8 after a leading "/" is an absolute path, not an escaped name.
  if (encodePathBytes(bytes) !== path) return 'must be relative to the repository root (no leading "/")';
  if (bytes.includes(0)) return "must not contain NUL";
  if (bytes.length > MAX_PATH_BYTES) return `must be at most ${MAX_PATH_BYTES} bytes (is ${bytes.length})`;
  if (bytes[0] === SLASH) return 'must be relative to the repository root (no leading "/")';
  return segmentProblem(path.slice(ESCAPED_PATH_PREFIX.length).split("/"));
}

function segmentProblem(segments: readonly string[]): string | null {
  if (segments[0] === "") return 'must be relative to the repository root (no leading "/")';
  for (const segment of segments) {
    if (segment === "") return 'must not contain an empty segment ("//" or a trailing "/")';
    if (segment === "." || segment === "..") return `must not contain a "${segment}" segment`;
  }
  return null;
}

/**
 * UTF-8 byte length without allocating an encoded copy; null when a lone surrogate makes the
 * string unencodable (it could not have come from a real file name).
 */
function utf8Length(text: string): number | null {
  let bytes = 0;
  for (let index = 0; index < text.length; index++) {
    const unit = text.charCodeAt(index);
    if (unit < 0x80) bytes += 1;
    else if (unit < 0x800) bytes += 2;
    else if (unit >= 0xd800 && unit <= 0xdbff) {
      const next = text.charCodeAt(index + 1);
      if (!(next >= 0xdc00 && next <= 0xdfff)) return null;
      bytes += 4;
      index++;
    } else if (unit >= 0xdc00 && unit <= 0xdfff) return null;
    else bytes += 3;
  }
  return bytes;
}

/**
 * Total order on paths by UTF-16 code unit. Not localeCompare: that depends on the runtime's
 * locale data and would make the output order differ between machines.
 */
export function comparePaths(left: string, right: string): number {
  if (left < right) return -1;
  return left > right ? 1 : 0;
}

/**
 * Sorts in place in comparePaths order. The default sort compares strings by UTF-16 code unit
 * too, but natively: no callback per comparison, which is most of the cost at 50k paths.
 */
export function sortPaths(paths: string[]): string[] {
  return paths.sort();
}
