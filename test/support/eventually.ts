/**
 * @module test/support/eventually
 * Polls until a check passes, within a bound: for what the product promises within a time
 * (the account index catching up after a restart, through its alarm) rather than at once.
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
