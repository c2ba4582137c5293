/** Git refuses longer paths on most platforms (PATH_MAX); anything longer is not a real observation. */
export const MAX_PATH_BYTES = 4096;

/**
 * A repo-relative path as git stores it: non-empty, at most 4096 UTF-8 bytes, "/"-separated,
 * no leading "/", no "." or ".." segment, no empty segment, no NUL, well-formed Unicode.
 * Backslashes, spaces, quotes, newlines and non-ASCII are legal: they are real file names.
 * Returns a rule describing the first broken rule, or null if the path is valid.
 */
export function repoPathProblem(path: string): string | null {
  if (path.length === 0) return "must not be empty";
  if (path.includes("\0")) return "must not contain NUL";
  const bytes = utf8Length(path);
  if (bytes === null) return "must be well-formed Unicode (no lone surrogate)";
  if (bytes > MAX_PATH_BYTES) return `must be at most ${MAX_PATH_BYTES} UTF-8 bytes (is ${bytes})`;
  if (path.startsWith("/")) return 'must be relative to the repository root (no leading "/")';
  for (const segment of path.split("/")) {
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
