/**
 * On-CPU samples of the workerd process that runs the Worker and its Durable Objects, recorded by
 * `perf record -g` (native frames, and JavaScript frames named through V8's perf map when workerd
 * runs with MINIFLARE_WORKERD_V8_FLAGS="--perf-basic-prof"), sorted into the stages of a tool
 * call. A sample belongs to the first narrow stage, in the order listed, that any frame of its
 * stack matches (a commit, a statement, a validation: wherever they run from); failing that, to
 * the broad stage (the object's JavaScript, the MCP SDK, the middleware) of its innermost frame
 * that names one, so work is charged where it runs, not to whoever called it. Unlike V8's own
 * profiler, perf samples CPU time, so a machine busy with other work does not move the shares.
 */
import { execFileSync, spawn } from "node:child_process";
import { open } from "node:fs/promises";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { workerdPid } from "../../test/support/dev-server.ts";

export interface StageRule {
  label: string;
  /** Tested against each frame's symbol (JavaScript frames: `JS:<name> index.js:<line>`). */
  frame: RegExp;
  /**
   * narrow (default): any frame of the stack; broad: the innermost frame that any broad stage
   * matches; fallback: the same, for samples no other stage took.
   */
  tier?: "broad" | "fallback";
}

/** Function names as the bundle keeps them: `JS:` then V8's tier mark (*, +, ^, ~) then the name. */
const js = (...names: string[]) => new RegExp(`^JS:[*+^~']*(${names.join("|")}) `);

/** The account object's RPC methods (src/account/account-object.ts): a sample under one is the account object's work. */
const ACCOUNT_METHODS = [
  "recordWorkflow",
  "recordShare",
  "prepareWorkflow",
  "listWorkflows",
  "searchWork",
  "related",
  "deviceKeys",
  "approveDevice",
  "addDevice",
  "revokeDevice",
  "verifyToken",
  "activeToken",
  "touchToken",
];

/** The account object's share of the Worker process's samples (what one account object would run on its own thread). */
export const ACCOUNT_OBJECT_STAGES: StageRule[] = [{ label: "account object", frame: js(...ACCOUNT_METHODS) }];

/** The same samples by method: what each of the account object's calls costs it (bench/load.ts divides by the meter's calls). */
export const ACCOUNT_METHOD_STAGES: StageRule[] = ACCOUNT_METHODS.map((name) => ({ label: name, frame: js(name) }));

export const TOOL_CALL_STAGES: StageRule[] = [
  { label: "V8 garbage collection", frame: /Scavenger|MarkCompact|ConcurrentMarking|Sweeper|cppgc::|Heap::Collect|GCTracer|MinorMS/ },
  {
    label: "SQLite commit (WAL write, fsync)",
    frame: /vdbeCommit|sqlite3PagerCommitPhaseOne|pagerWalFrames|ActorSqlite::commit|sys_fsync/,
  },
  { label: "SQL statements (SQLite)", frame: /sqlite3|SqliteDatabase|SqlStorage/ },
  { label: "event hash chain (SHA-256)", frame: js("eventHash") },
  {
    label: "device signature: Ed25519 and signed bytes",
    frame: js("ed25519Verifies", "messageBytes", "signedMessage", "verifyDeviceSignature"),
  },
  { label: "canonical JSON of signed data", frame: js("canonicalJson") },
  { label: "redaction of agent-written text", frame: js("redactToolArguments") },
  { label: "tool input validation (zod)", frame: js("parseArguments") },
  { label: "McpServer built for the request", frame: js("buildMcpServer", "serverFor", "McpServer") },
  {
    label: "edge attribution (union, dedup, scope, overlaps)",
    frame: js("computeNetChanges", "summarizeChanges", "checkScope", "attributeTask", "attributeOverlaps", "sharedChanges"),
  },
  {
    label: "workflow object: the write's JavaScript",
    frame: js("run", "transactionSync", "logOnTask", "startTask", "completeTask"),
    tier: "broad",
  },
  { label: "account object (device verdict, index push)", frame: js("recordWorkflow", "verifyDeviceSignature", "verify"), tier: "broad" },
  // Native frames are matched from the symbol's start: a continuation's frame names the type it resumes with.
  {
    label: "object side of the RPC (capnp, structured clone)",
    frame: /^workerd::(api::JsRpcTargetBase|ActorCache|Worker::Actor)/,
    tier: "broad",
  },
  {
    label: "Worker side of the RPC (stub, capnp, structured clone)",
    frame:
      /^(workerd::api::(JsRpcClient|JsRpcProperty|JsRpcStub|\(anonymous namespace\)::callImpl)|v8::(internal::)?Value(De)?[sS]erializer|capnp::)/,
    tier: "broad",
  },
  {
    tier: "broad",
    label: "MCP SDK: request routing, JSON-RPC, result checks",
    frame: js(
      "serveModern",
      "fetchFace",
      "invoke",
      "handle",
      "handleMessage",
      "classifyEntryRequest",
      "classifyInboundRequest",
      "_onrequest",
      "_onclose",
      "executeToolHandler",
      "safeParse",
      "send",
      "close",
      "SdkError",
    ),
  },
  { label: "tool run and result (Worker side)", frame: js("runTool", "toolResult", "withDigest", "render"), tier: "broad" },
  {
    tier: "broad",
    label: "Waymark's middleware (guard, auth, body, scopes) and hono",
    frame: js(
      "dispatch",
      "compose",
      "prove",
      "requireAccount",
      "bodyLimit\\d*",
      "mcpRoutes[.\\w]*",
      "requestGuard",
      "mcpScopes",
      "authenticateToken",
      "bearerPrincipal",
      "securityHeaders",
    ),
  },
  {
    label: "wrangler dev's entry worker and middleware (local only)",
    frame: /entry\.worker\.js|JS:[*+^~']*(__facade\w*|drainBody|jsonError) /,
    tier: "broad",
  },
  {
    label: "workerd HTTP (request, response, headers)",
    frame:
      /^(kj::HttpServer|kj::HttpHeaders|kj::\(anonymous namespace\)::HttpInputStream|workerd::api::(Headers|Request|Response|Body)|<?hyper::)/,
    tier: "broad",
  },
  { label: "V8 compiling JavaScript (JIT, other threads)", frame: /CompilationJob|maglev::|compiler::Pipeline/, tier: "broad" },
  { label: "other JavaScript of the Worker", frame: /^JS:/, tier: "fallback" },
  { label: "kernel (network, scheduling)", frame: /^\[kernel\.kallsyms\]/, tier: "fallback" },
];

export interface StageShares {
  samples: number;
  /** Share of the process's on-CPU samples, 0..1, by stage ("other workerd" for the rest). */
  shares: Record<string, number>;
}

/** Reads `perf script` of `file` and sorts its samples into `rules`. */
export async function stageShares(file: string, rules: readonly StageRule[] = TOOL_CALL_STAGES): Promise<StageShares> {
  const counts: Record<string, number> = {};
  let samples = 0;
  const take = (lines: readonly string[]) => {
    if (lines.length < 2) return;
    // "<address> <symbol>+0x<offset> (<dso>)": the symbol without its offset, and where it lives.
    const frames = lines.slice(1).map((line) => {
      const match = /^\s*[0-9a-f]+ (.*?)(\+0x[0-9a-f]+)? \((.*)\)$/.exec(line);
      return match ? (match[3]?.includes("kernel.kallsyms") ? `[kernel.kallsyms] ${match[1]}` : (match[1] ?? "")) : "";
    });
    samples++;
    const innermost = (tier: StageRule["tier"]) => {
      for (const frame of frames) {
        const rule = rules.find((r) => r.tier === tier && r.frame.test(frame));
        if (rule) return rule.label;
      }
      return undefined;
    };
    const label =
      rules.find((r) => r.tier === undefined && frames.some((f) => r.frame.test(f)))?.label ??
      innermost("broad") ??
      innermost("fallback") ??
      "other workerd (event loop, I/O, allocation)";
    counts[label] = (counts[label] ?? 0) + 1;
  };
  // Read as it comes: a few minutes of samples print more than a string may hold.
  const script = spawn("perf", ["script", "-i", file], { stdio: ["ignore", "pipe", "ignore"] });
  let block: string[] = [];
  for await (const line of createInterface({ input: script.stdout })) {
    if (line.trim() === "") {
      take(block);
      block = [];
    } else block.push(line);
  }
  take(block);
  return { samples, shares: Object.fromEntries(Object.entries(counts).map(([label, n]) => [label, n / Math.max(1, samples)])) };
}

/**
 * `perf record` of the Worker's workerd, started paused: `sampling(true)` and `sampling(false)`
 * turn it on and off (perf's control FIFO, each command acknowledged), so only the measured
 * calls are sampled.
 */
export async function recordPerf(port: number, file: string, dir: string, frequency = 1999) {
  const pid = workerdPid(port);
  if (pid === null) throw new Error("no Worker process to record");
  const control = join(dir, `ctl-${Date.now()}`);
  const ack = `${control}-ack`;
  execFileSync("mkfifo", [control, ack]);
  const args = ["record", "-F", String(frequency), "-g", "-p", String(pid), "-o", file, "-D", "-1", "--control", `fifo:${control},${ack}`];
  const child = spawn("perf", args, { stdio: "ignore" });
  // Opening a FIFO waits for its other end: perf opens both once it runs.
  const [toPerf, fromPerf] = await Promise.all([open(control, "w"), open(ack, "r")]);
  const command = async (word: "enable" | "disable") => {
    await toPerf.write(`${word}\n`);
    const reply = Buffer.alloc(5);
    await fromPerf.read(reply, 0, 5);
  };
  return {
    pid,
    sampling: (on: boolean) => command(on ? "enable" : "disable"),
    stop: async () => {
      await toPerf.close();
      await fromPerf.close();
      await new Promise<void>((resolve) => {
        child.once("exit", () => resolve());
        child.kill("SIGINT");
      });
    },
  };
}
