/**
 * @module paths
 * The path rules of the edge: the shared ones of @waymark/protocol/paths (validation, the
 * byte-preserving wire form of names that are not UTF-8, display, order).
 */
export {
  comparePaths,
  decodeWirePath,
  displayPath,
  encodePathBytes,
  isEscapedPath,
  MAX_PATH_BYTES,
  repoPathProblem,
  sortPaths,
} from "@waymark/protocol/paths";
