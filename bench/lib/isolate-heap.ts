/**
 * The V8 heap of the Worker's isolate under `wrangler dev`, read through wrangler's DevTools
 * inspector (`Runtime.getHeapUsage`; wrangler accepts the DevTools origin only). Sampled
 * every few milliseconds while an operation runs; the isolate answers between its tasks, so the
 * samples show what a request left on the heap (live data plus garbage not yet collected).
 */
const DEVTOOLS_ORIGIN = "https://devtools.devprod.cloudflare.dev";

export interface HeapUsage {
  usedSize: number;
  totalSize: number;
}

export interface IsolateHeap {
  before: HeapUsage;
  /** Largest used and committed sizes sampled during the operation. */
  peakUsed: number;
  peakTotal: number;
  samples: number;
}

export class Inspector {
  private nextId = 1;
  private readonly pending = new Map<number, (result: unknown) => void>();

  private readonly socket: WebSocket;

  private constructor(socket: WebSocket) {
    this.socket = socket;
    socket.addEventListener("message", (message) => {
      const body = JSON.parse(String(message.data)) as { id?: number; result?: unknown };
      if (body.id === undefined) return;
      this.pending.get(body.id)?.(body.result);
      this.pending.delete(body.id);
    });
  }

  static open(url: string, timeoutMs = 10_000): Promise<Inspector> {
    // Node's WebSocket takes headers as a second argument; the DOM type does not know it.
    const init = { headers: { Origin: DEVTOOLS_ORIGIN } } as unknown as string[];
    const socket = new WebSocket(url, init);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`inspector ${url} did not open within ${timeoutMs} ms`)), timeoutMs);
      socket.addEventListener("open", () => {
        clearTimeout(timer);
        resolve(new Inspector(socket));
      });
      socket.addEventListener("error", () => {
        clearTimeout(timer);
        reject(new Error(`inspector ${url} refused the connection`));
      });
    });
  }

  heapUsage(timeoutMs = 30_000): Promise<HeapUsage> {
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.pending.delete(id);
        reject(new Error(`no Runtime.getHeapUsage answer within ${timeoutMs} ms`));
      }, timeoutMs);
      this.pending.set(id, (result) => {
        clearTimeout(timer);
        resolve(result as HeapUsage);
      });
      this.socket.send(JSON.stringify({ id, method: "Runtime.getHeapUsage" }));
    });
  }

  async during<T>(operation: () => Promise<T>, everyMs = 5): Promise<{ value: T; heap: IsolateHeap }> {
    const before = await this.heapUsage();
    const heap: IsolateHeap = { before, peakUsed: before.usedSize, peakTotal: before.totalSize, samples: 0 };
    const sample = async () => {
      const usage = await this.heapUsage();
      heap.peakUsed = Math.max(heap.peakUsed, usage.usedSize);
      heap.peakTotal = Math.max(heap.peakTotal, usage.totalSize);
      heap.samples++;
    };
    let sampling = true;
    const sampler = (async () => {
      while (sampling) {
        await sample();
        await new Promise((r) => setTimeout(r, everyMs));
      }
    })();
    try {
      const value = await operation();
      return { value, heap };
    } finally {
      sampling = false;
      await sampler;
      await sample();
    }
  }

  close(): void {
    this.socket.close();
  }
}
