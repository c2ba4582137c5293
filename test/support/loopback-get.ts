/**
 * @module test/support/loopback-get
 * A GET over a real socket from a chosen loopback address (127.0.0.2, 127.0.0.3, …): to a
 * server on 127.0.0.1 each address is a different client (CF-Connecting-IP), as different
 * machines would be. For tests and benches of per-client limits; loopback only. And a run of
 * requests kept within one minute, for the per-minute budgets.
 */
import { request } from "node:http";

export interface Got {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
  bytes: number;
}

export function getFrom(url: string, from: string): Promise<Got> {
  if (!from.startsWith("127.")) throw new Error(`getFrom: ${from} is not a loopback address`);
  return new Promise((resolve, reject) => {
    const req = request(url, { localAddress: from, headers: { Accept: "text/html" } }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (chunk: Buffer) => chunks.push(chunk));
      res.on("end", () => {
        const all = Buffer.concat(chunks);
        resolve({ status: res.statusCode ?? 0, headers: res.headers, body: all.toString("utf8"), bytes: all.length });
      });
      res.on("error", reject);
    });
    req.on("error", reject);
    req.end();
  });
}

/** The minute a per-minute budget counts in: the local limiter's windows turn over on the wall clock's minutes. */
const minuteNow = () => Math.floor(Date.now() / 60_000);

/**
 * What `run` observed, in a run that lay within one minute: a burst that straddles two is split
 * between them and says nothing about a per-minute budget, so it is run again from the start of
 * the next minute (the clock's turn is the condition waited for), three runs at most. Each run
 * should use readers and links of its own.
 */
export async function withinOneMinute<T>(run: () => Promise<T>): Promise<T> {
  for (let attempt = 0; attempt < 3; attempt++) {
    const started = minuteNow();
    const seen = await run();
    if (minuteNow() === started) return seen;
    await new Promise((resolve) => setTimeout(resolve, (minuteNow() + 1) * 60_000 - Date.now()));
  }
  throw new Error("three runs in a row straddled a minute's turn, each from a minute's start: a run takes over a minute");
}
