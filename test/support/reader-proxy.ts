/**
 * @module test/support/reader-proxy
 * Readers on machines of their own, for browser tests against a `wrangler dev` on 127.0.0.1. The
 * server budgets anonymous reads per client (CF-Connecting-IP: 20 page reads per 10 s, 20 exports
 * a minute, 5 of them of one link), and every test file's Chromium and Node connect from
 * 127.0.0.1: tests that read side by side, or one after another within 10 s, would spend one
 * budget together, as no two people on different machines do. So each browser context a test opens is a reader of its own:
 * its traffic goes through an HTTP proxy (plain requests, and CONNECT tunnels, which Chromium
 * uses for WebSockets) that reaches the server from a loopback address no other reader has.
 * Tests of the budgets themselves choose their addresses (test/support/loopback-get.ts).
 */
import { mkdirSync } from "node:fs";
import { createServer, request } from "node:http";
import { connect, type Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Browser, BrowserContext, BrowserContextOptions, Page } from "playwright-core";
import { READER_CLAIMS_ENV } from "./worker-build-setup.ts";

// Addresses are claimed (an atomic mkdir) in a directory of this test run (made and removed by the
// global setup; outside vitest, one of this process's own), so files side by side never share one.
const CLAIMS = process.env[READER_CLAIMS_ENV] ?? join(tmpdir(), `waymark-readers-${process.pid}`);
let nextClaim = 1;

/** A loopback address no other reader of this run has: 127.200.x.y (page-bounds reads from 127.0.0.x). */
export function newReaderAddress(): string {
  mkdirSync(CLAIMS, { recursive: true });
  for (; ; nextClaim++) {
    try {
      mkdirSync(join(CLAIMS, String(nextClaim)));
      break;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
    }
  }
  const n = nextClaim++;
  return `127.200.${(Math.floor(n / 250) % 250) + 1}.${(n % 250) + 2}`;
}

export interface ReaderProxy {
  /** The proxy's URL, for Playwright's `proxy.server`. */
  server: string;
  /** The loopback address the server sees this reader at. */
  address: string;
  close(): Promise<void>;
}

const HOP_BY_HOP = ["proxy-connection", "proxy-authorization", "connection", "keep-alive"];

function isLoopback(host: string): boolean {
  return host === "localhost" || host.startsWith("127.") || host === "[::1]" || host === "::1";
}

function tunnel(client: Socket, host: string, port: number, address: string, first: (upstream: Socket) => void): void {
  const upstream = connect({ host, port, localAddress: address }, () => {
    first(upstream);
    upstream.pipe(client);
    client.pipe(upstream);
  });
  upstream.on("error", () => client.destroy());
  client.on("error", () => upstream.destroy());
  client.on("close", () => upstream.destroy());
  upstream.on("close", () => client.destroy());
}

/** A proxy to loopback servers only, connecting from `address`. */
export async function startReaderProxy(address = newReaderAddress()): Promise<ReaderProxy> {
  const sockets = new Set<Socket>();
  const proxy = createServer((req, res) => {
    const target = new URL(req.url ?? "/", "http://invalid");
    if (!isLoopback(target.hostname)) {
      res.writeHead(403).end("reader proxy: loopback targets only");
      return;
    }
    const headers = { ...req.headers };
    for (const name of HOP_BY_HOP) delete headers[name];
    const upstream = request(
      {
        host: target.hostname,
        port: target.port,
        path: `${target.pathname}${target.search}`,
        method: req.method,
        headers,
        localAddress: address,
      },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.statusMessage, answer.headers);
        answer.pipe(res);
      },
    );
    upstream.on("error", () => res.destroy());
    req.pipe(upstream);
  });
  proxy.on("connection", (socket: Socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
  });
  proxy.on("connect", (req, client: Socket, head: Buffer) => {
    const [host = "", port = ""] = (req.url ?? "").split(/:(?=\d+$)/);
    if (!isLoopback(host)) return client.end("HTTP/1.1 403 Forbidden\r\n\r\n");
    tunnel(client, host, Number(port), address, (upstream) => {
      client.write("HTTP/1.1 200 Connection Established\r\n\r\n");
      if (head.length > 0) upstream.write(head);
    });
  });
  // A WebSocket asked for as a plain request through the proxy: passed on as it came.
  proxy.on("upgrade", (req, client: Socket, head: Buffer) => {
    const target = new URL(req.url ?? "/", "http://invalid");
    if (!isLoopback(target.hostname)) return client.end("HTTP/1.1 403 Forbidden\r\n\r\n");
    const lines = [`${req.method} ${target.pathname}${target.search} HTTP/1.1`];
    for (let i = 0; i < req.rawHeaders.length; i += 2) {
      const name = req.rawHeaders[i] as string;
      if (!name.toLowerCase().startsWith("proxy-")) lines.push(`${name}: ${req.rawHeaders[i + 1]}`);
    }
    tunnel(client, target.hostname, Number(target.port), address, (upstream) => {
      upstream.write(`${lines.join("\r\n")}\r\n\r\n`);
      if (head.length > 0) upstream.write(head);
    });
  });
  await new Promise<void>((resolve) => proxy.listen(0, "127.0.0.1", resolve));
  const { port } = proxy.address() as { port: number };
  return {
    server: `http://127.0.0.1:${port}`,
    address,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        proxy.close(() => resolve());
      }),
  };
}

/**
 * `browser`, whose every new context (and page: `newPage` opens a context) is a reader of its own,
 * through a proxy of its own; `closeAll` closes the proxies.
 */
export function readersOf(browser: Browser): { browser: Browser; closeAll: () => Promise<void> } {
  const proxies: ReaderProxy[] = [];
  async function withReader(options: BrowserContextOptions = {}): Promise<BrowserContextOptions> {
    const proxy = await startReaderProxy();
    proxies.push(proxy);
    return { ...options, proxy: { server: proxy.server } };
  }
  const newContext = async (options?: BrowserContextOptions): Promise<BrowserContext> => browser.newContext(await withReader(options));
  const newPage = async (options?: BrowserContextOptions): Promise<Page> => browser.newPage(await withReader(options));
  const wrapped = new Proxy(browser, {
    get(target, property) {
      if (property === "newContext") return newContext;
      if (property === "newPage") return newPage;
      const value: unknown = Reflect.get(target, property, target);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
  return { browser: wrapped, closeAll: async () => void (await Promise.all(proxies.map((p) => p.close()))) };
}
