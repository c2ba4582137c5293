/**
 * An HTTP proxy on 127.0.0.1 in front of a local dev server that can lose one answer: in
 * "drop" mode, the next request whose body matches is forwarded and answered by the server
 * (so the write lands), then the client's connection is destroyed instead of answered. That is
 * the hard case for a retry: the server acted, the caller never heard. It keeps every request
 * it forwarded (method, path, body), so a test can say exactly what left the machine, and how
 * many requests it took.
 */
import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";

export interface DroppingProxy {
  url: string;
  /** Drop the answer to the next request whose body contains `needle`; resolves once it was dropped. */
  dropNext(needle: string): Promise<void>;
  /** The bodies of every request forwarded so far, as text. */
  sent(): string[];
  /** Every request forwarded so far: its HTTP method, path and body, and when it arrived (Date.now()). */
  requests(): { method: string; path: string; body: string; at: number }[];
  close(): Promise<void>;
}

async function body(request: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

export async function startDroppingProxy(upstream: string): Promise<DroppingProxy> {
  let drop: { needle: string; done: () => void } | null = null;
  const forwarded: { method: string; path: string; body: Buffer; at: number }[] = [];
  const server: Server = createServer(async (request, response) => {
    const at = Date.now();
    try {
      const payload = await body(request);
      forwarded.push({ method: request.method ?? "", path: request.url ?? "/", body: payload, at });
      const headers = new Headers();
      for (const [name, value] of Object.entries(request.headers)) {
        if (typeof value === "string" && name !== "host" && name !== "connection" && name !== "content-length") headers.set(name, value);
      }
      const answer = await fetch(`${upstream}${request.url ?? "/"}`, {
        method: request.method,
        headers,
        body: request.method === "GET" || request.method === "HEAD" ? undefined : new Uint8Array(payload),
      });
      const answered = Buffer.from(await answer.arrayBuffer());
      const armed = drop;
      if (armed && payload.includes(armed.needle)) {
        drop = null;
        request.socket.destroy();
        armed.done();
        return;
      }
      const out: Record<string, string> = {};
      answer.headers.forEach((value, name) => {
        if (name !== "content-encoding" && name !== "transfer-encoding" && name !== "content-length") out[name] = value;
      });
      response.writeHead(answer.status, out).end(answered);
    } catch {
      response.destroy();
    }
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    sent: () => forwarded.map((r) => r.body.toString("utf8")),
    requests: () => forwarded.map((r) => ({ method: r.method, path: r.path, body: r.body.toString("utf8"), at: r.at })),
    dropNext: (needle) =>
      new Promise<void>((resolve) => {
        drop = { needle, done: resolve };
      }),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
