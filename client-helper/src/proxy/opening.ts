/**
 * @module proxy/opening
 * An agent's MCP session opens with a handshake and a few lists (Claude Code: server/discover,
 * subscriptions/listen, resources/list, tools/list), and the agent's first model request waits
 * for them. Answered the ordinary way they wait for the MCP SDK to load and for the endpoint's
 * own handshake and tool list, most of the helper's start. So the stdio server keeps, per
 * endpoint, helper version and token (a hash of it: the token is never written), what its last
 * session's opening was: each message the client sent (without its id) and what the server
 * answered. When a new session opens with the same messages in the same order, each is answered
 * at once from what was kept, with the new id, while the SDK loads.
 *
 * Nothing is answered in the SDK's place: every message the client sends reaches the SDK as it
 * was sent and in order (so its state is exactly the state of a session it answered itself), and
 * the SDK's own answers to what was already answered are held back. Where the SDK's answer to a
 * list differs from the kept one (the endpoint's tools changed since), the client is told the
 * list changed (`notifications/tools/list_changed`, or resources'), and asks again; the next
 * session keeps the new opening. A message the kept opening does not have (another client, a new
 * helper, an opening in another order), and everything after it, waits for the SDK as before; a
 * session without a kept opening is served as if this module were not there.
 *
 * Loaded before the SDK: node built-ins only.
 */
import { createHash, randomUUID } from "node:crypto";
import { mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { PassThrough, type Readable, Writable } from "node:stream";

type Message = Record<string, unknown> & { id?: unknown; method?: unknown; params?: unknown };

/** What the server answered to one message of the opening: a result, or a subscription's acknowledgement. */
type Answer = { result: unknown } | { acknowledged: Message };
/** One message of a kept opening: as the client sent it without its id, and the server's answer (none for a notification). */
type Exchange = { sent: string; answer?: Answer };
type KeptFile = { version: 1; openings: Exchange[][] };

/** Requests answered at once when kept; the lists among them are checked against the SDK's answer. */
const ANSWERED = new Set([
  "initialize",
  "server/discover",
  "subscriptions/listen",
  "tools/list",
  "resources/list",
  "resources/templates/list",
]);
const LISTS = new Set(["tools/list", "resources/list", "resources/templates/list"]);
/** Notifications of the opening: nothing answers them. */
const SILENT = new Set(["notifications/initialized"]);
/** What changes the session's state: matched only in the order they were kept (a list may come in any order). */
const ORDERED = new Set(["initialize", "notifications/initialized", "server/discover", "subscriptions/listen"]);
const SUBSCRIPTION_ID = "io.modelcontextprotocol/subscriptionId";
const ACKNOWLEDGED = "notifications/subscriptions/acknowledged";

/** Bounds: messages kept per opening, openings kept (one per client that opened with its own first message), bytes read. */
const OPENING_MESSAGES = 16;
const OPENINGS = 4;
const KEPT_BYTES = 1024 * 1024;
/** A line longer than this is no opening message: everything from there on goes straight to the SDK. */
const LINE_BYTES = 1024 * 1024;

export type OpeningKey = { url: string; version: string; token: string | undefined };

/** The kept opening's file: its name hashes the endpoint, the helper's version and the token (never written itself). */
export function openingFile(cache: string, key: OpeningKey): string {
  const token = createHash("sha256")
    .update(key.token ?? "")
    .digest("hex");
  const name = createHash("sha256").update(["waymark-opening", key.url, key.version, token].join("\0")).digest("hex").slice(0, 32);
  return join(cache, "openings", `${name}.json`);
}

function readKept(file: string): Exchange[][] {
  try {
    const text = readFileSync(file, "utf8");
    if (text.length > KEPT_BYTES) return [];
    const kept = JSON.parse(text) as KeptFile;
    if (kept.version !== 1 || !Array.isArray(kept.openings)) return [];
    return kept.openings.filter((opening) => Array.isArray(opening) && opening.every((exchange) => typeof exchange?.sent === "string"));
  } catch {
    return [];
  }
}

const isRequest = (message: Message) => typeof message.method === "string" && message.id !== undefined;
const withoutId = (message: Message) => {
  const { id: _id, ...rest } = message;
  return JSON.stringify(rest);
};
const subscriptionOf = (message: Message) => (message.params as { _meta?: Record<string, unknown> } | undefined)?._meta?.[SUBSCRIPTION_ID];

function parse(line: string): Message | null {
  try {
    const message: unknown = JSON.parse(line);
    return message !== null && typeof message === "object" && !Array.isArray(message) ? (message as Message) : null;
  } catch {
    return null;
  }
}

/** The answer kept for `exchange`, as sent to the request `id` of this session. */
function answerTo(answer: Answer, id: unknown): Message {
  if ("result" in answer) return { jsonrpc: "2.0", id, result: answer.result };
  const params = (answer.acknowledged.params ?? {}) as { _meta?: Record<string, unknown> };
  return { ...answer.acknowledged, params: { ...params, _meta: { ...params._meta, [SUBSCRIPTION_ID]: id } } };
}

/** A kept opening, with each message's method (the order rule needs it). */
type Following = { exchanges: Exchange[]; methods: string[]; used: Set<number> };

export class OpeningFront {
  /** What the SDK's transport reads: every line the client sent, in order. */
  readonly input = new PassThrough();
  /** What the SDK's transport writes: held back where the client already had it, else passed on. */
  readonly output: Writable;
  private readonly kept: Exchange[][];
  /** The kept opening this session follows; "stopped" once a message was not in it. */
  private following: Following | "stopped" | null = null;
  /** Requests answered from the kept opening (their method and answer), and subscriptions acknowledged from it, by id. */
  private readonly answered = new Map<unknown, { method: string; answer: Answer }>();
  private readonly acknowledged = new Set<unknown>();
  /** This session's opening as it goes, for the next session; null once kept for good or given up. */
  private recording: (Exchange & { id?: unknown; method: string })[] | null = [];
  private recordingClosed = false;
  private lastKept: string;
  private inbound = "";
  private outbound = "";
  /** Nothing more to answer early or to record: the client's bytes go to the SDK untouched. */
  private passthrough = false;
  private stale: ((method: string) => void) | null = null;
  private readonly pendingStale = new Set<string>();
  private readonly waiting: (() => void)[] = [];

  private constructor(
    private readonly file: string,
    private readonly write: (text: string) => void,
    private readonly log: (line: string) => void,
  ) {
    this.kept = readKept(file);
    this.lastKept = JSON.stringify(this.kept);
    this.output = new Writable({
      write: (chunk: Buffer | string, _encoding, done) => {
        this.fromServer(chunk.toString());
        done();
      },
    });
  }

  /** Starts reading the client's messages now (before the SDK loads). */
  static start(
    file: string,
    options: { input?: Readable; write?: (text: string) => void; log?: (line: string) => void } = {},
  ): OpeningFront {
    const client = options.input ?? process.stdin;
    const front = new OpeningFront(file, options.write ?? ((text) => process.stdout.write(text)), options.log ?? (() => {}));
    client.on("data", (chunk: Buffer) => front.fromClient(chunk.toString("utf8")));
    client.on("end", () => {
      front.input.end();
      // The session ends: the SDK is loaded now, to end it.
      front.passthrough = true;
      front.checkNeeded();
    });
    client.on("error", (error) => front.input.destroy(error));
    return front;
  }

  /**
   * Resolves once the client sends what the kept opening does not answer (or there is none), at
   * most `limitMs` from now. Loading the SDK takes the event loop for a few hundred milliseconds
   * at a time, and a few hundred milliseconds of CPU: started sooner, it would hold the kept
   * answers back, and take the CPU the agent needs for its own start (its first model request).
   */
  needed(limitMs: number): Promise<void> {
    if (this.isNeeded()) return Promise.resolve();
    return new Promise((resolve) => {
      const timer = setTimeout(resolve, limitMs);
      this.waiting.push(() => {
        clearTimeout(timer);
        resolve();
      });
    });
  }

  private isNeeded(): boolean {
    return this.kept.length === 0 || this.following === "stopped" || this.passthrough;
  }

  private checkNeeded(): void {
    if (this.waiting.length === 0 || !this.isNeeded()) return;
    for (const resolve of this.waiting.splice(0)) resolve();
  }

  /** Once the SDK serves: how the client is told that a list it was answered from the kept opening changed. */
  attach(stale: (method: string) => void): void {
    this.stale = stale;
    for (const method of this.pendingStale) stale(method);
    this.pendingStale.clear();
  }

  private fromClient(text: string): void {
    if (this.passthrough) {
      this.input.write(text);
      return;
    }
    this.inbound += text;
    for (let end = this.inbound.indexOf("\n"); end >= 0 && !this.passthrough; end = this.inbound.indexOf("\n")) {
      const line = this.inbound.slice(0, end + 1);
      this.inbound = this.inbound.slice(end + 1);
      this.clientLine(line);
    }
    if (this.passthrough || this.inbound.length > LINE_BYTES) {
      // What is left goes to the SDK as it came.
      this.stopFollowing();
      this.passthrough = true;
      this.input.write(this.inbound);
      this.inbound = "";
    }
    this.checkNeeded();
  }

  /** One message from the client: answered at once if the kept opening has it next, recorded, and passed on to the SDK. */
  private clientLine(line: string): void {
    const message = parse(line.replace(/\r?\n$/, ""));
    const method = typeof message?.method === "string" ? message.method : null;
    if (message && method && (ANSWERED.has(method) || SILENT.has(method))) {
      this.answerEarly(message, method);
      this.record(message, method);
    } else {
      this.stopFollowing();
      this.closeRecording();
      if (this.answered.size === 0 && this.acknowledged.size === 0 && this.recording === null) this.passthrough = true;
    }
    this.input.write(line);
  }

  private answerEarly(message: Message, method: string): void {
    if (this.following === "stopped") return;
    const sent = withoutId(message);
    if (this.following === null) {
      const exchanges = this.kept.find((opening) => opening[0]?.sent === sent);
      if (!exchanges) {
        this.stopFollowing();
        return;
      }
      this.following = { exchanges, methods: exchanges.map((e) => String(parse(e.sent)?.method)), used: new Set() };
    }
    const { exchanges, methods, used } = this.following;
    // A message that changes the session's state only in its kept place; a list wherever it comes.
    const at = exchanges.findIndex(
      (exchange, index) =>
        !used.has(index) && exchange.sent === sent && methods.slice(0, index).every((m, k) => used.has(k) || !ORDERED.has(m)),
    );
    const answer = exchanges[at]?.answer;
    if (at < 0 || (isRequest(message) && !answer)) {
      this.stopFollowing();
      return;
    }
    used.add(at);
    if (!answer) return;
    if ("acknowledged" in answer) this.acknowledged.add(message.id);
    else this.answered.set(message.id, { method, answer });
    this.write(`${JSON.stringify(answerTo(answer, message.id))}\n`);
  }

  private stopFollowing(): void {
    this.following = "stopped";
  }

  private record(message: Message, method: string): void {
    if (!this.recording || this.recordingClosed) return;
    if (this.recording.length >= OPENING_MESSAGES) {
      this.closeRecording();
      return;
    }
    this.recording.push({ sent: withoutId(message), method, ...(isRequest(message) ? { id: message.id } : {}) });
  }

  private closeRecording(): void {
    if (this.recordingClosed) return;
    this.recordingClosed = true;
    this.keepIfComplete();
  }

  private fromServer(text: string): void {
    if (this.answered.size === 0 && this.acknowledged.size === 0 && this.recording === null && this.outbound === "") {
      this.write(text);
      return;
    }
    this.outbound += text;
    for (let end = this.outbound.indexOf("\n"); end >= 0; end = this.outbound.indexOf("\n")) {
      const line = this.outbound.slice(0, end + 1);
      this.outbound = this.outbound.slice(end + 1);
      if (this.serverLine(line)) this.write(line);
    }
  }

  /** One message of the SDK's: recorded if it answers the opening; false when the client already had it. */
  private serverLine(line: string): boolean {
    const message = parse(line);
    if (!message) return true;
    if (message.method === ACKNOWLEDGED) {
      const subscription = subscriptionOf(message);
      this.recordAnswer(subscription, { acknowledged: message });
      return !this.acknowledged.delete(subscription);
    }
    // Requests and notifications of the server's own pass; only answers to the client's requests are looked at.
    if (message.method !== undefined || message.id === undefined) return true;
    const result: Answer | null = "result" in message ? { result: message.result } : null;
    this.recordAnswer(message.id, result);
    const early = this.answered.get(message.id);
    if (!early) return true;
    this.answered.delete(message.id);
    // The endpoint's list moved since it was kept: the client is told, and asks again.
    if (
      LISTS.has(early.method) &&
      result &&
      "result" in early.answer &&
      JSON.stringify(result.result) !== JSON.stringify(early.answer.result)
    )
      this.listChanged(early.method);
    return false;
  }

  private listChanged(method: string): void {
    const kind = method === "tools/list" ? "tools/list" : "resources/list";
    this.log(`waymark: the endpoint's ${kind === "tools/list" ? "tools" : "resources"} changed since the last session; the agent is told`);
    if (this.stale) this.stale(kind);
    else this.pendingStale.add(kind);
  }

  /** The server's answer to a recorded request (null: an error, and no opening to keep). */
  private recordAnswer(id: unknown, answer: Answer | null): void {
    if (!this.recording || id === undefined) return;
    const exchange = this.recording.find((e) => e.id !== undefined && e.id === id && !e.answer);
    if (!exchange) return;
    if (!answer) {
      this.recording = null;
      return;
    }
    exchange.answer = answer;
    this.keepIfComplete();
  }

  /** Keeps this session's opening once every request of it is answered (and it listed the tools). */
  private keepIfComplete(): void {
    const recording = this.recording;
    if (!recording || recording.some((e) => e.id !== undefined && !e.answer)) return;
    if (this.recordingClosed) this.recording = null;
    if (!recording.some((e) => e.method === "tools/list")) return;
    const opening: Exchange[] = recording.map(({ sent, answer }) => (answer ? { sent, answer } : { sent }));
    const openings = [opening, ...this.kept.filter((kept) => kept[0]?.sent !== opening[0]?.sent).slice(0, OPENINGS - 1)];
    const text = JSON.stringify(openings);
    if (text === this.lastKept) return;
    this.lastKept = text;
    try {
      mkdirSync(join(this.file, ".."), { recursive: true, mode: 0o700 });
      const temp = `${this.file}.${process.pid}.${randomUUID()}.tmp`;
      writeFileSync(temp, JSON.stringify({ version: 1, openings } satisfies KeptFile), { mode: 0o600 });
      renameSync(temp, this.file);
    } catch (error) {
      this.log(`waymark: could not keep the session's opening: ${String(error)}`);
    }
  }
}
