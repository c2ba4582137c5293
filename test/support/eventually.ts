/**
 * @module test/support/eventually
 * Polls until a check passes, within a bound: for what the product promises within a time
 * (the account index catching up after a restart, through its alarm) rather than at once. The
 * suite waits for conditions this way, never for a fixed time.
 */
export async function eventually<T>(what: string, check: () => Promise<T | null>, timeoutMs: number, everyMs = 200): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== null) return value;
    if (Date.now() > deadline) throw new Error(`${what}: not within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}

/**
 * Waits until the clock reads later than `ms` (ms since the epoch): for a test whose subject is a
 * time having passed (a link's expiry, one write strictly after another). Inside workerd the clock
 * moves only across I/O, so it is read between short timers.
 */
export async function clockPast(ms: number): Promise<void> {
  await eventually(
    `the clock past ${new Date(ms).toISOString()}`,
    async () => (Date.now() > ms ? true : null),
    Math.max(0, ms - Date.now()) + 5_000,
    1,
  );
}
