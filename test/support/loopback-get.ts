/**
 * @module test/support/loopback-get
 * A GET over a real socket from a chosen loopback address (127.0.0.2, 127.0.0.3, …): to a
 * server on 127.0.0.1 each address is a different client (CF-Connecting-IP), as different
 * machines would be. For tests and benches of per-client limits; loopback only.
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
