/**
 * @module load-server — how the throughput benches (`load`, `team`, `bench/load.ts --seconds`) run
 * `wrangler dev`: the same Worker, wrangler and SQLite settings as `npm start`, minus two costs
 * that exist only under `wrangler dev` and that no deployment pays on the Worker's cores.
 *
 * - `--log-level warn`: wrangler's dev proxy prints a line per request (`POST /mcp 200 OK (3ms)`)
 *   by a loopback fetch from its proxy workerd into wrangler's Node process
 *   (miniflare's entry worker, `maybeLogRequest`). Measured in a 50-agent run: 0.4 ms of Node's CPU
 *   and 0.1-0.2 ms of the proxy's per call, about a tenth of the CPU of a call across every process.
 *   Cloudflare's network writes no such line; `npm start` keeps it (a developer reads it).
 * - The data directory on tmpfs: under `wrangler dev` every Durable Object shares one thread, and
 *   each commit of the local SQLite (WAL, a sync per commit) blocks that thread in fsync until the
 *   disk answers — 2.3 fsyncs per tool call in a 50-agent run (the workflow's commit, the account's
 *   batched push, and workerd's local alarm table, which Cloudflare keeps in the object's own
 *   storage), 0.3 ms median each under strace. On Cloudflare each object has a thread of its own
 *   and a commit is replicated while the thread serves its next request (the output gate holds the
 *   reply). The commits and their fsyncs are unchanged here; the bench's throwaway data (removed
 *   when the server stops) just does not wait for a disk. `npm start` keeps its data on disk.
 */
import type { DevServerOptions } from "../../test/support/dev-server.ts";

export const LOAD_SERVER: DevServerOptions = { logLevel: "warn", dataInMemory: true };
