/**
 * The checksum floor as its own process (so it pays a process start like the helper's CLI):
 * a plain walk of the directory given that hashes every file as git names contents.
 *
 *   npx node bench/lib/walk-floor.ts <dir>
 */
import { walkAndHash } from "./repos.ts";

const dir = process.argv[2];
if (!dir) {
  console.error("usage: npx node bench/lib/walk-floor.ts <dir>");
  process.exit(2);
}
console.log(walkAndHash(dir));
