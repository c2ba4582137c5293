/**
 * @module test/support/file-clock
 * The file system's clock, for tests in Node whose subject is one file written after another.
 */
import { rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { eventually } from "./eventually.ts";

/**
 * Waits until files written in `dir` (the temp folder, where the tests' files are) get a modification time a millisecond or more past now: the file system's
 * clock is coarser than Date.now() (a kernel tick), so a test whose subject is one file written
 * after another (an edit after a reminder) waits for that clock, not a guessed number of ms.
 */
export async function fileClockPast(dir: string = tmpdir()): Promise<void> {
  const now = Date.now();
  const probe = join(dir, `.clock-probe-${process.pid}`);
  await eventually(
    "the file system's clock past now",
    async () => {
      writeFileSync(probe, "");
      // A whole millisecond past: a time of that file system's clock can be `now` plus a fraction, while
      // Date.now() (the journal's times) still reads `now`, so an edit would tie with what came before.
      return statSync(probe).mtimeMs >= now + 1 ? true : null;
    },
    5_000,
    1,
  );
  rmSync(probe, { force: true });
}
