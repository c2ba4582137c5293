/**
 * Malformed and hostile requests against a local dev server, generated from a seed so any
 * failure reproduces (`--seed N`). Every answer must be a clear refusal — an HTTP 4xx with a
 * JSON body, a JSON-RPC error, or an MCP tool error whose text starts with a stable code —
 * never a 5xx, an internal error or a dropped connection; and a refused request stores nothing.
 *
 * Cases that must be refused all aim at one "target" workflow of account acme, whose event log
 * is compared before and after. Cases whose input is odd but legal (unicode, FTS syntax in text)
 * go to a "scratch" workflow and may be accepted, but must then store the text exactly.
 */
import { pick, type Random } from "./stats.ts";

export interface FuzzTarget {
  url: string;
  /** account "acme" */
  token: string;
  /** account "globex" */
  otherToken: string;
  /** acme: an active workflow with an open task and a completed task */
  workflowId: string;
  openTaskId: string;
  completedTaskId: string;
  /** an idempotency key already used by a log_milestone on openTaskId */
  usedKey: string;
  /** acme: a workflow that legal odd input may write to */
  scratchWorkflowId: string;
  scratchTaskId: string;
  /** globex: ids acme must not reach */
  foreignWorkflowId: string;
  foreignTaskId: string;
  /** tools/list of the server: unknown tools get generic cases from their schema */
  tools: { name: string; inputSchema: Record<string, unknown> }[];
}

export type Expect = "refuse" | "any";

export interface FuzzCase {
  label: string;
  method: string;
  path: string;
  headers: Record<string, string>;
  body?: string | Uint8Array<ArrayBuffer>;
  expect: Expect;
  /** For accepted odd text: the value that must be stored exactly. */
  echo?: string;
}

export const STABLE_CODES = ["INPUT_VALIDATION_ERROR", "NOT_FOUND", "CONFLICT", "UNAUTHORIZED", "PAYLOAD_TOO_LARGE"] as const;

// ── values ───────────────────────────────────────────────────────────────────

const HOSTILE_STRINGS = ["\ud800", "a\udfffb", "\udc00\ud800", "tab\tok\u0000nul", "esc\u001b[31m", "bell\u0007", "del\u007f", "\u0001"];

/** Well-formed but unusual text: legal, must round-trip exactly. */
const ODD_LEGAL_STRINGS = [
  "\ufeffBOM first",
  "right-to-left \u202eevil\u202c",
  "zero\u200bwidth\u200djoiner",
  "e\u0301 combining vs é",
  "emoji 🧭 👩‍👩‍👧‍👦 🏳️‍🌈",
  "𝕬𝖑𝖑 astral 𠜎",
  "line\nbreak\r\nand\ttab",
  '"quoted" OR title:* NEAR(a b) AND (c',
  "step-3 -not ^boost col:umn",
  "* ? [ ] { } ( ) ^ ~ : \\ / ; '",
  "<script>alert(1)</script>",
  "'; DROP TABLE tasks; --",
  "#{process.env} {{7*7}} %s %n $(id)",
  "\u2028line sep\u2029para sep",
];

const TRAVERSAL_PATHS = [
  "../etc/passwd",
  "a/../../b",
  "/etc/passwd",
  "./a",
  "a/./b",
  "a//b",
  "a/",
  "",
  "..",
  ".",
  "nul\u0000byte",
  "lone\ud800surrogate",
  `${"x".repeat(4097)}`,
  `${"é".repeat(2049)}`,
];

const WRONG_TYPES: unknown[] = [
  null,
  0,
  -1,
  1.5,
  1e308,
  true,
  "",
  "x",
  [],
  [1, 2],
  {},
  { nested: { deeper: [] } },
  "__proto__",
  { __proto__: { polluted: true } },
];

function hugeString(random: Random): string {
  return "A".repeat(pick(random, [4_001, 10_000, 100_000, 1_000_000]));
}

function hugeArray(random: Random): unknown[] {
  return Array.from({ length: pick(random, [51, 101, 1_000, 30_000]) }, (_, i) => `item ${i}`);
}

function deepNest(depth: number): string {
  return `${"[".repeat(depth)}${"]".repeat(depth)}`;
}

const hex40 = (c: string) => c.repeat(40);

// ── requests ─────────────────────────────────────────────────────────────────

let nextId = 1;

function mcpHeaders(token: string | null): Record<string, string> {
  const headers: Record<string, string> = {
    "Content-Type": "application/json",
    Accept: "application/json, text/event-stream",
    "MCP-Protocol-Version": "2025-06-18",
  };
  if (token !== null) headers.Authorization = `Bearer ${token}`;
  return headers;
}

function toolCase(label: string, token: string, name: string, args: unknown, expect: Expect = "refuse", echo?: string): FuzzCase {
  return {
    label,
    method: "POST",
    path: "/mcp",
    headers: mcpHeaders(token),
    body: JSON.stringify({ jsonrpc: "2.0", id: nextId++, method: "tools/call", params: { name, arguments: args } }),
    expect,
    echo,
  };
}

function rawCase(
  label: string,
  body: string | Uint8Array<ArrayBuffer>,
  headers: Record<string, string>,
  method = "POST",
  path = "/mcp",
): FuzzCase {
  return { label, method, path, headers, body: method === "GET" ? undefined : body, expect: "refuse" };
}

/** Valid arguments for each tool against the target; a mutation then breaks one thing. */
function baseline(t: FuzzTarget, tool: string): Record<string, unknown> {
  switch (tool) {
    case "start_workflow":
      return { name: "fuzz", description: "d", plan: [{ step: "1", goal: "g" }] };
    case "start_task":
      return { workflow_id: t.workflowId, name: "fuzz task", goal: "g", areas: ["src/**"] };
    case "log_decision":
      return { task_id: t.openTaskId, category: "trade_off", question: "q", options_considered: ["a"], chosen: "a", reasoning: "r" };
    case "log_issue":
      return { task_id: t.openTaskId, type: "bug_encountered", description: "d", resolution: "r", requires_human_review: false };
    case "log_milestone":
      return { task_id: t.openTaskId, message: "m", progress: 10 };
    case "complete_task":
      return { task_id: t.openTaskId, status: "success", outcome: { summary: "s" } };
    case "complete_workflow":
      return { workflow_id: t.workflowId, status: "success", summary: "s" };
    case "get_workflow":
      return { workflow_id: t.workflowId };
    default:
      return fromSchema(t.tools.find((x) => x.name === tool)?.inputSchema ?? {});
  }
}

/** Minimal valid-looking arguments from a JSON Schema, for tools this file does not know. */
function fromSchema(schema: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  const properties = (schema.properties ?? {}) as Record<string, Record<string, unknown>>;
  for (const name of (schema.required ?? []) as string[]) {
    const p = properties[name] ?? {};
    const values = p.enum as unknown[] | undefined;
    out[name] = values?.[0] ?? { string: "fuzz", number: 1, integer: 1, boolean: false, array: [], object: {} }[String(p.type)] ?? "fuzz";
  }
  return out;
}

const REQUIRED = new Set([
  "task_id",
  "workflow_id",
  "name",
  "goal",
  "message",
  "question",
  "chosen",
  "reasoning",
  "category",
  "type",
  "description",
  "resolution",
  "status",
  "outcome",
  "summary",
]);

const jsonType = (v: unknown) => (v === null ? "null" : Array.isArray(v) ? "array" : typeof v);

/** The same arguments aimed at the scratch workflow. */
function scratch(t: FuzzTarget, args: Record<string, unknown>): Record<string, unknown> {
  const out = { ...args };
  if ("task_id" in out) out.task_id = t.scratchTaskId;
  if ("workflow_id" in out) out.workflow_id = t.scratchWorkflowId;
  return out;
}

const WRITE_TOOLS = ["start_task", "log_decision", "log_issue", "log_milestone", "complete_task", "complete_workflow"];
const TEXT_FIELDS: Record<string, string[]> = {
  start_task: ["name", "goal"],
  log_decision: ["question", "chosen", "reasoning", "trade_offs"],
  log_issue: ["description", "resolution"],
  log_milestone: ["message"],
  complete_workflow: ["summary"],
};

/** One generated case. Each family is a way a client (or an attacker) gets a request wrong. */
export function generate(random: Random, t: FuzzTarget): FuzzCase {
  const family = Math.floor(random() * 12);
  const toolNames = t.tools.map((x) => x.name);
  switch (family) {
    case 0: {
      // Broken JSON-RPC at the HTTP level.
      const broken: [string, string | Uint8Array<ArrayBuffer>][] = [
        ["empty body", ""],
        ["not json", "hello"],
        ["truncated", '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"log_milestone"'],
        ["invalid utf-8", new Uint8Array([0x7b, 0x22, 0x61, 0x22, 0x3a, 0x22, 0xed, 0xa0, 0x80, 0x22, 0x7d])],
        ["overlong utf-8", new Uint8Array([0x7b, 0x22, 0x61, 0x22, 0x3a, 0x22, 0xc0, 0xaf, 0x22, 0x7d])],
        ["wrong version", JSON.stringify({ jsonrpc: "1.0", id: 1, method: "tools/list" })],
        ["no method", JSON.stringify({ jsonrpc: "2.0", id: 1 })],
        ["method not a string", JSON.stringify({ jsonrpc: "2.0", id: 1, method: 42 })],
        ["unknown method", JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/destroy" })],
        ["id is an object", JSON.stringify({ jsonrpc: "2.0", id: { a: 1 }, method: "tools/list" })],
        ["params an array", JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/call", params: [1, 2] })],
        [
          "arguments a string",
          JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "log_milestone", arguments: "x" } }),
        ],
        ["no tool name", JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { arguments: {} } })],
        ["unknown tool", JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "rm_rf", arguments: {} } })],
        ["empty batch", "[]"],
        ["batch of junk", "[1, 2, 3]"],
        ["a bare number", "42"],
        ["null", "null"],
        ["deep nesting 10k", deepNest(10_000)],
        [
          "deep nesting in arguments",
          `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"log_milestone","arguments":{"task_id":"${t.openTaskId}","message":"m","metadata":{"a":${deepNest(5_000)}}}}}`,
        ],
        [
          "duplicate keys",
          `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"log_milestone","arguments":{"task_id":"${t.openTaskId}","message":"m","message":"\\ud800"}}}`,
        ],
      ];
      const [label, body] = pick(random, broken);
      return rawCase(`jsonrpc: ${label}`, body, mcpHeaders(t.token));
    }
    case 1: {
      // Transport and auth mistakes.
      const valid = JSON.stringify({
        jsonrpc: "2.0",
        id: 1,
        method: "tools/call",
        params: { name: "log_milestone", arguments: baseline(t, "log_milestone") },
      });
      const variants: [string, FuzzCase][] = [
        ["no token", rawCase("auth: no token", valid, mcpHeaders(null))],
        ["bad token", rawCase("auth: bad token", valid, mcpHeaders("token-acme-12"))],
        ["basic auth", rawCase("auth: basic", valid, { ...mcpHeaders(null), Authorization: "Basic YWNtZTp4" })],
        ["token with CRLF-like junk", rawCase("auth: junk", valid, { ...mcpHeaders(null), Authorization: `Bearer ${"x".repeat(5000)}` })],
        ["foreign origin", rawCase("transport: origin", valid, { ...mcpHeaders(t.token), Origin: "https://evil.example" })],
        ["no accept", rawCase("transport: no accept", valid, { "Content-Type": "application/json", Authorization: `Bearer ${t.token}` })],
        ["text/plain", rawCase("transport: text/plain", valid, { ...mcpHeaders(t.token), "Content-Type": "text/plain" })],
        ["GET", rawCase("transport: GET /mcp", "", mcpHeaders(t.token), "GET")],
        ["DELETE", rawCase("transport: DELETE /mcp", "", mcpHeaders(t.token), "DELETE")],
        ["PUT", rawCase("transport: PUT /mcp", valid, mcpHeaders(t.token), "PUT")],
        [
          "bad protocol version",
          rawCase("transport: protocol version", valid, { ...mcpHeaders(t.token), "MCP-Protocol-Version": "1999-01-01" }),
        ],
      ];
      return pick(random, variants)[1];
    }
    case 2: {
      // A field of another JSON type than the baseline's. Same-type values may be legal
      // ([] areas, 0 progress): those go to the scratch workflow and may be accepted.
      const tool = pick(random, WRITE_TOOLS);
      const args = baseline(t, tool);
      const field = pick(random, Object.keys(args));
      const closing = tool === "complete_task" || tool === "complete_workflow";
      const candidates = closing ? WRONG_TYPES.filter((v) => jsonType(v) !== jsonType(args[field])) : WRONG_TYPES;
      const value = pick(random, candidates);
      const label = `${tool}.${field}: ${JSON.stringify(value)}`;
      // null for an optional field means "not given"; for a required one it is refused.
      if (jsonType(value) === jsonType(args[field]) || (value === null && !REQUIRED.has(field))) {
        return toolCase(label, t.token, tool, { ...scratch(t, args), [field]: value }, "any");
      }
      return toolCase(label, t.token, tool, { ...args, [field]: value });
    }
    case 3: {
      // Hostile text: lone surrogates and control characters.
      const tool = pick(random, Object.keys(TEXT_FIELDS));
      const field = pick(random, TEXT_FIELDS[tool] ?? []);
      const value = pick(random, HOSTILE_STRINGS);
      return toolCase(`${tool}.${field}: hostile text`, t.token, tool, { ...baseline(t, tool), [field]: value });
    }
    case 4: {
      // Huge strings and arrays.
      const tool = pick(random, ["start_task", "log_decision", "log_milestone", "complete_task", "complete_workflow"]);
      const args = baseline(t, tool);
      if (random() < 0.5) {
        const field = pick(random, TEXT_FIELDS[tool] ?? ["task_id"]);
        return toolCase(`${tool}.${field}: huge string`, t.token, tool, { ...args, [field]: hugeString(random) });
      }
      const listField =
        tool === "start_task"
          ? "areas"
          : tool === "log_decision"
            ? "options_considered"
            : tool === "complete_workflow"
              ? "achievements"
              : null;
      if (listField) return toolCase(`${tool}.${listField}: huge array`, t.token, tool, { ...args, [listField]: hugeArray(random) });
      if (tool === "log_milestone") {
        return toolCase("log_milestone.metadata: huge", t.token, tool, { ...args, metadata: { blob: "x".repeat(5000) } });
      }
      return toolCase("complete_task.outcome.achievements: huge", t.token, tool, {
        ...args,
        outcome: { summary: "s", achievements: hugeArray(random) },
      });
    }
    case 5: {
      // Path traversal and malformed paths in the helper-only inputs.
      const path = pick(random, TRAVERSAL_PATHS);
      if (random() < 0.5) {
        const changes = { type: "checksum", transitions: [{ path, before: null, after: { mode: "100644", blob: hex40("a") } }] };
        return toolCase(`complete_task.changes path ${JSON.stringify(path.slice(0, 20))}`, t.token, "complete_task", {
          ...baseline(t, "complete_task"),
          changes,
        });
      }
      const snapshot = { type: "git", head: hex40("b"), dirty: [{ path, head: null, worktree: { mode: "100644", blob: hex40("c") } }] };
      return toolCase(`start_task.snapshot path ${JSON.stringify(path.slice(0, 20))}`, t.token, "start_task", {
        ...baseline(t, "start_task"),
        snapshot,
      });
    }
    case 6: {
      // Malformed helper data: bad modes, ids, shapes, too many entries.
      const entry = { path: "src/a.ts", before: null, after: { mode: "100644", blob: hex40("a") } };
      const bad: [string, unknown][] = [
        ["mode not octal", { type: "checksum", transitions: [{ ...entry, after: { mode: "999999", blob: hex40("a") } }] }],
        ["blob not hex", { type: "checksum", transitions: [{ ...entry, after: { mode: "100644", blob: "z".repeat(40) } }] }],
        ["blob uppercase", { type: "checksum", transitions: [{ ...entry, after: { mode: "100644", blob: "A".repeat(40) } }] }],
        ["unknown type", { type: "svn", transitions: [] }],
        ["extra key", { type: "checksum", transitions: [], evil: 1 }],
        ["git without snapshot", { type: "git", start_head: null, head: null, committed: [], dirty: [] }],
        ["too many entries", { type: "checksum", transitions: Array.from({ length: 25_001 }, (_, i) => ({ ...entry, path: `f${i}` })) }],
        // Identical duplicates are tolerated (src/domain/changes.ts); disagreeing ones leave no truth to pick.
        [
          "disagreeing duplicate path",
          { type: "checksum", transitions: [entry, { ...entry, after: { mode: "100644", blob: hex40("b") } }] },
        ],
        ["entry not an object", { type: "checksum", transitions: ["src/a.ts"] }],
      ];
      const [label, changes] = pick(random, bad);
      return toolCase(`complete_task.changes: ${label}`, t.token, "complete_task", { ...baseline(t, "complete_task"), changes });
    }
    case 7: {
      // Forged ids: well-formed but unknown, malformed, or of the wrong kind.
      const forged = pick(random, [
        `wf_${"a".repeat(20)}`,
        `tk_${t.workflowId.slice(3)}_${"a".repeat(8)}`,
        `tk_${"b".repeat(20)}_${"c".repeat(8)}`,
        t.workflowId,
        "../../wf",
        "wf_ÄÖÜ",
        "x".repeat(65),
        "tk_",
        `${t.openTaskId} `,
        t.openTaskId.toUpperCase(),
      ]);
      const tool = pick(random, [...WRITE_TOOLS, "get_workflow"]);
      const args = baseline(t, tool);
      const key = "task_id" in args ? "task_id" : "workflow_id";
      // The target's own workflow id is a real id where a workflow id is expected.
      if (key === "workflow_id" && forged === t.workflowId)
        return toolCase(`${tool}.workflow_id: a task id`, t.token, tool, { ...args, workflow_id: t.openTaskId });
      if (tool === "start_task" && random() < 0.5) {
        return toolCase(`start_task.parent_task_id forged`, t.token, tool, { ...args, parent_task_id: forged });
      }
      return toolCase(`${tool}.${key} forged ${JSON.stringify(forged.slice(0, 16))}`, t.token, tool, { ...args, [key]: forged });
    }
    case 8: {
      // Another account's ids, with our token; our ids with theirs.
      const tool = pick(random, [...WRITE_TOOLS, "get_workflow"]);
      const args = baseline(t, tool);
      if (random() < 0.3) return toolCase(`${tool} with globex token on acme ids`, t.otherToken, tool, args);
      const foreign = "task_id" in args ? { task_id: t.foreignTaskId } : { workflow_id: t.foreignWorkflowId };
      if (tool === "start_task" && random() < 0.5) {
        return toolCase("start_task under a globex parent", t.token, tool, { ...args, parent_task_id: t.foreignTaskId });
      }
      return toolCase(`${tool} on globex ids`, t.token, tool, { ...args, ...foreign });
    }
    case 9: {
      // Duplicates and state conflicts: what a confused or replaying agent sends.
      const variants: FuzzCase[] = [
        toolCase("complete_task twice", t.token, "complete_task", { ...baseline(t, "complete_task"), task_id: t.completedTaskId }),
        toolCase("log on a completed task", t.token, "log_milestone", { task_id: t.completedTaskId, message: "late" }),
        toolCase("subtask of a completed task", t.token, "start_task", { ...baseline(t, "start_task"), parent_task_id: t.completedTaskId }),
        toolCase("reused idempotency key, other input", t.token, "log_milestone", {
          task_id: t.openTaskId,
          message: `other ${random()}`,
          idempotency_key: t.usedKey,
        }),
        toolCase("reused key on another tool", t.token, "log_issue", { ...baseline(t, "log_issue"), idempotency_key: t.usedKey }),
        toolCase("bad idempotency key", t.token, "log_milestone", {
          ...baseline(t, "log_milestone"),
          idempotency_key: pick(random, ["", "a b", "ü", "x".repeat(201), "../k", "k\u0000"]),
        }),
        toolCase("complete workflow with open tasks", t.token, "complete_workflow", baseline(t, "complete_workflow")),
        toolCase("unknown field", t.token, "log_milestone", { ...baseline(t, "log_milestone"), admin: true }),
        toolCase("bad enum", t.token, "log_decision", { ...baseline(t, "log_decision"), category: "yolo" }),
        toolCase("progress out of range", t.token, "log_milestone", {
          ...baseline(t, "log_milestone"),
          progress: pick(random, [-1, 101, 1e9, -0.001]),
        }),
        toolCase("missing required", t.token, "log_issue", { task_id: t.openTaskId }),
      ];
      return pick(random, variants);
    }
    case 10: {
      // Odd but legal text (unicode edge cases, FTS and SQL syntax): may be accepted, then stored exactly.
      const value = pick(random, ODD_LEGAL_STRINGS);
      const unknown = toolNames.filter((n) => !(n in TEXT_FIELDS) && !["start_workflow", "complete_task", "get_workflow"].includes(n));
      if (unknown.length > 0 && random() < 0.4) {
        // Tools this file does not know (e.g. search): every string input gets the odd text.
        const tool = pick(random, unknown);
        const args = baseline(t, tool);
        for (const key of Object.keys(args)) if (typeof args[key] === "string") args[key] = value;
        return toolCase(`${tool}: odd legal text`, t.token, tool, args, "any");
      }
      return toolCase(
        "log_milestone: odd legal text",
        t.token,
        "log_milestone",
        { task_id: t.scratchTaskId, message: value },
        "any",
        value,
      );
    }
    default: {
      // The pages and the share API with junk.
      const variants: FuzzCase[] = [
        rawCase("pages: forged token", "", {}, "GET", `/s/${"a".repeat(40)}`),
        rawCase("pages: junk token", "", {}, "GET", `/s/..%2F..%2Fetc%2Fpasswd`),
        rawCase("pages: export with junk token", "", {}, "GET", `/s/${encodeURIComponent("\u202e<x>")}/export.json`),
        rawCase("pages: ws without upgrade", "", {}, "GET", `/s/${"b".repeat(30)}/ws`),
        rawCase(
          "api: share of a forged id",
          "",
          { Authorization: `Bearer ${t.token}` },
          "GET",
          `/api/workflows/wf_${"z".repeat(20)}/share`,
        ),
        rawCase(
          "api: share of globex's workflow",
          "",
          { Authorization: `Bearer ${t.token}` },
          "GET",
          `/api/workflows/${t.foreignWorkflowId}/share`,
        ),
        rawCase(
          "api: share with junk body",
          "{not json",
          { Authorization: `Bearer ${t.token}`, "Content-Type": "application/json" },
          "POST",
          `/api/workflows/${t.workflowId}/share`,
        ),
        rawCase(
          "api: share bad action",
          JSON.stringify({ action: "delete_everything" }),
          { Authorization: `Bearer ${t.token}`, "Content-Type": "application/json" },
          "POST",
          `/api/workflows/${t.workflowId}/share`,
        ),
        rawCase(
          "api: share bad expiry",
          JSON.stringify({ action: "set_expiry", expires_in_seconds: -5 }),
          { Authorization: `Bearer ${t.token}`, "Content-Type": "application/json" },
          "POST",
          `/api/workflows/${t.workflowId}/share`,
        ),
        rawCase("api: no token", "", {}, "GET", `/api/workflows/${t.workflowId}/share`),
      ];
      return pick(random, variants);
    }
  }
}

// ── judging answers ──────────────────────────────────────────────────────────

export interface Verdict {
  ok: boolean;
  /** "http-4xx", "jsonrpc-error", "tool-error:<CODE>", "accepted" */
  kind: string;
  status: number;
  detail: string;
}

function messageOf(text: string): Record<string, unknown> | null {
  const json =
    text.startsWith("event:") || text.startsWith("data:") ? (text.split("\n").find((l) => l.startsWith("data: ")) ?? "").slice(6) : text;
  try {
    const parsed: unknown = JSON.parse(json);
    return parsed !== null && typeof parsed === "object" && !Array.isArray(parsed) ? (parsed as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}

/** Sends one case and judges the answer. A thrown fetch (reset, hang) is a failure. */
export async function send(url: string, c: FuzzCase, timeoutMs = 30_000): Promise<Verdict> {
  let response: Response;
  let text: string;
  try {
    response = await fetch(`${url}${c.path}`, {
      method: c.method,
      headers: c.headers,
      body: c.body,
      signal: AbortSignal.timeout(timeoutMs),
    });
    text = await response.text();
  } catch (error) {
    return {
      ok: false,
      kind: "no-answer",
      status: 0,
      detail: error instanceof Error ? `${error.message} ${String(error.cause ?? "")}` : String(error),
    };
  }
  const status = response.status;
  if (status >= 500) return { ok: false, kind: "5xx", status, detail: text.slice(0, 300) };
  if (status >= 400) {
    const isMcp = c.path === "/mcp";
    const body = messageOf(text);
    // /mcp answers JSON-RPC errors; pages answer HTML or JSON with a 4xx, which is clear enough for a browser.
    if (isMcp && !(body && typeof body.error === "object")) return { ok: false, kind: "unclear-4xx", status, detail: text.slice(0, 300) };
    return { ok: true, kind: "http-4xx", status, detail: text.slice(0, 120) };
  }
  if (c.path !== "/mcp") return { ok: c.expect === "any", kind: "accepted", status, detail: text.slice(0, 120) };
  const message = messageOf(text);
  if (!message) return { ok: false, kind: "unparseable", status, detail: text.slice(0, 300) };
  const error = message.error as { code?: number; message?: string } | undefined;
  if (error) {
    // -32603 is "internal error": something threw.
    const internal = error.code === -32603;
    return {
      ok: !internal,
      kind: internal ? "jsonrpc-internal" : "jsonrpc-error",
      status,
      detail: `${error.code} ${error.message ?? ""}`.slice(0, 200),
    };
  }
  const result = message.result as { isError?: boolean; content?: { text?: string }[] } | undefined;
  const toolText = (result?.content ?? []).map((x) => x.text ?? "").join("\n");
  if (result?.isError) {
    const code = STABLE_CODES.find((k) => toolText.startsWith(`${k}: `));
    return code
      ? { ok: true, kind: `tool-error:${code}`, status, detail: toolText.slice(0, 160) }
      : { ok: false, kind: "tool-error:unclear", status, detail: toolText.slice(0, 300) };
  }
  return { ok: c.expect === "any", kind: "accepted", status, detail: toolText.slice(0, 160) };
}

// ── a whole run ──────────────────────────────────────────────────────────────

/** tools/call over plain JSON-RPC (the endpoint is stateless). */
export async function rpcTool(url: string, token: string, name: string, args: Record<string, unknown>): Promise<Record<string, unknown>> {
  const response = await fetch(`${url}/mcp`, {
    method: "POST",
    headers: mcpHeaders(token),
    body: JSON.stringify({ jsonrpc: "2.0", id: nextId++, method: "tools/call", params: { name, arguments: args } }),
  });
  const message = messageOf(await response.text());
  const result = message?.result as
    | { isError?: boolean; structuredContent?: Record<string, unknown>; content?: { text?: string }[] }
    | undefined;
  if (!result || result.isError) throw new Error(`${name} failed: ${JSON.stringify(message).slice(0, 300)}`);
  return result.structuredContent ?? {};
}

async function listTools(url: string, token: string): Promise<FuzzTarget["tools"]> {
  const response = await fetch(`${url}/mcp`, {
    method: "POST",
    headers: mcpHeaders(token),
    body: JSON.stringify({ jsonrpc: "2.0", id: nextId++, method: "tools/list", params: {} }),
  });
  const message = messageOf(await response.text());
  return ((message?.result as { tools?: FuzzTarget["tools"] } | undefined)?.tools ?? []).map((x) => ({
    name: x.name,
    inputSchema: x.inputSchema,
  }));
}

/** Workflows for both accounts, in the states the cases need. */
export async function setupTarget(
  url: string,
  token: string,
  otherToken: string,
): Promise<FuzzTarget & { shareUrl: string; scratchShareUrl: string }> {
  const call = (name: string, args: Record<string, unknown>, as = token) => rpcTool(url, as, name, args);
  const wf = await call("start_workflow", { name: "Fuzz target" });
  const workflowId = String(wf.workflow_id);
  const done = await call("start_task", { workflow_id: workflowId, name: "Done", goal: "be completed" });
  await call("complete_task", { task_id: done.task_id, status: "success", outcome: { summary: "done" } });
  const open = await call("start_task", { workflow_id: workflowId, name: "Open", goal: "stay open" });
  const usedKey = "fuzz-used-key";
  await call("log_milestone", { task_id: open.task_id, message: "keyed", idempotency_key: usedKey });
  const scratchWf = await call("start_workflow", { name: "Fuzz scratch" });
  const scratchTask = await call("start_task", { workflow_id: scratchWf.workflow_id, name: "Scratch", goal: "take odd text" });
  const foreign = await call("start_workflow", { name: "Globex private" }, otherToken);
  const foreignTask = await call("start_task", { workflow_id: foreign.workflow_id, name: "Theirs", goal: "private" }, otherToken);
  return {
    url,
    token,
    otherToken,
    workflowId,
    openTaskId: String(open.task_id),
    completedTaskId: String(done.task_id),
    usedKey,
    scratchWorkflowId: String(scratchWf.workflow_id),
    scratchTaskId: String(scratchTask.task_id),
    foreignWorkflowId: String(foreign.workflow_id),
    foreignTaskId: String(foreignTask.task_id),
    tools: await listTools(url, token),
    shareUrl: String(wf.share_url),
    scratchShareUrl: String(scratchWf.share_url),
  };
}

export interface FuzzReport {
  seed: number;
  requests: number;
  seconds: number;
  kinds: Record<string, number>;
  failures: { index: number; label: string; verdict: Verdict }[];
  /** Problems outside single answers: a write from a refused request, a server that stopped answering, odd text not stored exactly. */
  problems: string[];
}

interface Snapshot {
  last_seq: number;
  tasks: number;
  milestones: number;
  decisions: number;
  issues: number;
  status: string;
}

async function snapshotOf(shareUrl: string): Promise<Snapshot & { messages: string[] }> {
  const view = (await (await fetch(`${shareUrl}/export.json`)).json()) as {
    last_seq: number;
    tasks: unknown[];
    milestones: { message: string }[];
    decisions: unknown[];
    issues: unknown[];
    workflow: { status: string };
  };
  return {
    last_seq: view.last_seq,
    tasks: view.tasks.length,
    milestones: view.milestones.length,
    decisions: view.decisions.length,
    issues: view.issues.length,
    status: view.workflow.status,
    messages: view.milestones.map((m) => m.message),
  };
}

/**
 * `count` cases from `seed`, `concurrency` at a time, all to 127.0.0.1 (the target's url), stopping
 * by itself after `count` cases or `maxSeconds`. Case i is always the same for the same seed.
 */
export async function runFuzz(
  target: FuzzTarget & { shareUrl: string; scratchShareUrl: string },
  options: { seed: number; count: number; concurrency?: number; maxSeconds?: number; onProgress?: (done: number) => void },
  random: Random,
): Promise<FuzzReport> {
  const started = performance.now();
  const deadline = Date.now() + (options.maxSeconds ?? 600) * 1000;
  const before = await snapshotOf(target.shareUrl);
  const cases = Array.from({ length: options.count }, () => generate(random, target));
  const kinds: Record<string, number> = {};
  const failures: FuzzReport["failures"] = [];
  const problems: string[] = [];
  const echoes = new Set<string>();
  let next = 0;
  let done = 0;
  const lane = async () => {
    for (let i = next++; i < cases.length && Date.now() < deadline; i = next++) {
      const c = cases[i] as FuzzCase;
      const verdict = await send(target.url, c);
      kinds[verdict.kind] = (kinds[verdict.kind] ?? 0) + 1;
      if (!verdict.ok) failures.push({ index: i, label: c.label, verdict });
      if (verdict.kind === "accepted" && c.echo !== undefined) echoes.add(c.echo);
      done++;
      if (done % 500 === 0) {
        options.onProgress?.(done);
        const health = await fetch(`${target.url}/health`, { signal: AbortSignal.timeout(10_000) }).catch(() => null);
        if (!health?.ok) problems.push(`/health did not answer after ${done} requests`);
      }
    }
  };
  await Promise.all(Array.from({ length: options.concurrency ?? 4 }, lane));
  if (done < cases.length) problems.push(`stopped at the time limit after ${done} of ${cases.length} requests`);
  const after = await snapshotOf(target.shareUrl);
  for (const key of ["last_seq", "tasks", "milestones", "decisions", "issues", "status"] as const) {
    if (after[key] !== before[key]) problems.push(`refused requests changed the target workflow: ${key} ${before[key]} → ${after[key]}`);
  }
  const stored = new Set((await snapshotOf(target.scratchShareUrl)).messages);
  for (const echo of echoes) if (!stored.has(echo)) problems.push(`accepted text not stored exactly: ${JSON.stringify(echo)}`);
  return { seed: options.seed, requests: done, seconds: (performance.now() - started) / 1000, kinds, failures, problems };
}
