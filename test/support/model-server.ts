/**
 * @module test/support/model-server
 * A scripted model on 127.0.0.1, so the real agent CLIs run offline and deterministically:
 * Claude Code reaches it through `ANTHROPIC_BASE_URL` (the Messages API, streamed as SSE),
 * Codex through a `model_providers` entry with `wire_api = "responses"` (the Responses API,
 * streamed as SSE). A script is a list of turns; each main-loop request of the agent gets the
 * next turn: some text, tool calls by name with their inputs (fixed, or computed from the tool
 * results the agent sent back), a latency before the first byte, a tail between its last block
 * and its end, and the usage figures the response reports. Every request is recorded (tests assert which tools the agent offered the
 * model) and every response with the usage it reported (tests compare the agent's record with
 * it exactly). Requests beside the main loop (token counting, title or topic side queries)
 * get a minimal answer and are recorded apart.
 *
 * Relative imports carry their `.ts` extension and there are no parameter properties, so the
 * benches can load this file through Node's type stripping.
 */
import { randomBytes } from "node:crypto";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

export type Api = "anthropic" | "openai";

/** The token counts one response reports (Anthropic's names; OpenAI's cached input is `cache_read_input_tokens`). */
export interface Usage {
  input_tokens: number;
  output_tokens: number;
  cache_creation_input_tokens: number;
  cache_read_input_tokens: number;
}

/** What a scripted tool call's input may be computed from: the tool results the agent sent back so far. */
export interface Conversation {
  /** Every result text of the tool called `name` (in the agent's own naming), oldest first. */
  results(name: string): string[];
  /** A field of the latest result of tool `name`: its JSON object's, else a `key: value` line's. */
  field(name: string, key: string): string;
}

export interface ScriptedCall {
  /** The tool's name as the agent offers it (`Write`, `mcp__waymark__start_task`, `shell`…). */
  name: string;
  /** JSON arguments; raw text for a freeform tool. */
  input: CallInput | ((conversation: Conversation) => CallInput);
  /**
   * Codex: how the call is made: a function call with JSON arguments (the default), a freeform
   * (custom) tool's raw text (`apply_patch`), or a search of its deferred tools (`tool_search`).
   */
  kind?: "function" | "freeform" | "tool_search";
  /** Codex: a tool offered inside a `namespace` tool is called with that namespace. */
  namespace?: string;
}

export type CallInput = Record<string, unknown> | string;

export interface Turn {
  text?: string;
  calls?: ScriptedCall[];
  usage: Usage;
  /** Milliseconds before the response's first byte (the model "thinking"). */
  latencyMs?: number;
  /**
   * Milliseconds between the response's last content block and its end (the Messages API's
   * message_delta with the output's usage, the Responses API's response.completed): a real model
   * still streams after a tool call's block closes, and an agent may run the call meanwhile.
   */
  tailMs?: number;
  /**
   * Played again (at most 20 times) while this holds for the conversation that answers it: a
   * model that searches until the agent's tools are there (Codex adds MCP tools once their
   * server has started).
   */
  again?: (conversation: Conversation) => boolean;
}

export interface ReceivedRequest {
  api: Api;
  path: string;
  at: number;
  /** A main-loop request (it took a turn of the script); false for side requests. */
  main: boolean;
  body: Record<string, unknown>;
}

export interface ServedResponse {
  api: Api;
  /** Index of the turn in the script; -1 once the script is exhausted. */
  turn: number;
  id: string;
  usage: Usage;
  calls: { id: string; name: string; input: unknown }[];
  text: string;
  /** When the request came in and when the last byte went out (ms since the epoch). */
  receivedAt: number;
  finishedAt: number;
}

export interface ModelServerOptions {
  /** The model name each response reports. */
  model?: string;
  /** Latency of every turn without its own. */
  latencyMs?: number;
  /** Tail of every turn without its own (see Turn.tailMs). */
  tailMs?: number;
}

const FINAL_TEXT = "Done.";
const MAX_REPLAYS = 20;

/** A scripted call as played: its id, and its input computed. */
interface PlayedCall {
  id: string;
  name: string;
  namespace: string | undefined;
  kind: NonNullable<ScriptedCall["kind"]>;
  input: unknown;
}

/** A response as the server writes it, in either API. */
interface Answer {
  id: string;
  model: string;
  text: string;
  calls: PlayedCall[];
  usage: Usage;
}

function served(call: PlayedCall): { id: string; name: string; input: unknown } {
  return { id: call.id, name: call.name, input: call.input };
}

export class ModelServer {
  readonly requests: ReceivedRequest[] = [];
  readonly responses: ServedResponse[] = [];
  /** Script errors: a turn whose tool input could not be computed from what the agent sent. */
  readonly errors: string[] = [];
  url = "";
  private script: Turn[] = [];
  private next = 0;
  private replays = 0;
  private server: Server | null = null;
  private readonly model: string;
  private readonly latencyMs: number;
  private readonly tailMs: number;

  constructor(options: ModelServerOptions = {}) {
    this.model = options.model ?? "claude-sonnet-4-5-20250929";
    this.latencyMs = options.latencyMs ?? 0;
    this.tailMs = options.tailMs ?? 0;
  }

  async start(): Promise<this> {
    const server = createServer((request, response) => {
      this.handle(request, response).catch((error: unknown) => {
        if (!response.headersSent) response.writeHead(500, { "content-type": "application/json" });
        response.end(JSON.stringify({ type: "error", error: { type: "api_error", message: String(error) } }));
      });
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    this.server = server;
    this.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    return this;
  }

  async stop(): Promise<void> {
    const server = this.server;
    this.server = null;
    if (!server) return;
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  /** Replaces the script; the next main-loop request gets its first turn. */
  play(script: Turn[]): void {
    this.script = script;
    this.next = 0;
    this.replays = 0;
    this.requests.length = 0;
    this.responses.length = 0;
    this.errors.length = 0;
  }

  /** Turns the agent has not asked for yet. */
  remaining(): number {
    return this.script.length - this.next;
  }

  /** The main-loop requests received so far. */
  mainRequests(): ReceivedRequest[] {
    return this.requests.filter((request) => request.main);
  }

  /** The index in `responses` of the first response that called `tool`, or -1. */
  callerOf(tool: string): number {
    return this.responses.findIndex((response) => response.calls.some((call) => call.name === tool));
  }

  /** The input of the first call of `tool` the model made. */
  inputOf(tool: string): Record<string, unknown> {
    return (this.responses[this.callerOf(tool)]?.calls.find((call) => call.name === tool)?.input ?? {}) as Record<string, unknown>;
  }

  /** The `index`th main request as its JSON text (quotes inside strings come escaped: see inJson). */
  requestText(index: number): string {
    return JSON.stringify(this.mainRequests()[index]?.body ?? {});
  }

  private async handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const receivedAt = Date.now();
    const path = (request.url ?? "/").split("?")[0] ?? "/";
    const raw = await readBody(request);
    let body: Record<string, unknown> = {};
    try {
      const parsed: unknown = raw === "" ? {} : JSON.parse(raw);
      if (parsed && typeof parsed === "object") body = parsed as Record<string, unknown>;
    } catch {
      // Not JSON: recorded as an empty body.
    }
    if (request.method === "POST" && path.endsWith("/messages") && Array.isArray(body.tools) && body.tools.length > 0) {
      this.requests.push({ api: "anthropic", path, at: receivedAt, main: true, body });
      return this.answer("anthropic", body, response, receivedAt);
    }
    if (request.method === "POST" && path.endsWith("/responses")) {
      this.requests.push({ api: "openai", path, at: receivedAt, main: true, body });
      return this.answer("openai", body, response, receivedAt);
    }
    const api: Api = path.endsWith("/responses") || path.endsWith("/models") ? "openai" : "anthropic";
    this.requests.push({ api, path, at: receivedAt, main: false, body });
    return this.side(path, body, response);
  }

  /**
   * The next turn, with its tool calls' inputs computed from the conversation so far. A script
   * whose input cannot be computed (the agent did not send the result it needs) does not advance:
   * the error is kept in `errors` and the agent gets a 400, which it does not retry.
   */
  private take(conversation: Conversation, prefix: string): { index: number; turn: Turn; calls: PlayedCall[] } {
    const previous = this.script[this.next - 1];
    if (previous?.again?.(conversation) && this.replays < MAX_REPLAYS) {
      this.replays++;
      this.next--;
    } else {
      this.replays = 0;
    }
    const index = this.next < this.script.length ? this.next : -1;
    const turn = index >= 0 ? (this.script[index] as Turn) : { text: FINAL_TEXT, usage: zeroUsage() };
    const calls = (turn.calls ?? []).map((call) => ({
      id: `${prefix}${randomBytes(12).toString("hex")}`,
      name: call.name,
      namespace: call.namespace,
      kind: call.kind ?? "function",
      input: typeof call.input === "function" ? call.input(conversation) : call.input,
    }));
    if (index >= 0) this.next++;
    return { index, turn, calls };
  }

  private refuse(response: ServerResponse, error: unknown): void {
    const message = error instanceof Error ? error.message : String(error);
    this.errors.push(message);
    response.writeHead(400, { "content-type": "application/json" });
    response.end(JSON.stringify({ type: "error", error: { type: "invalid_request_error", message: `script: ${message}` } }));
  }

  /** A main-loop request: the next turn, after its latency, in the request's API. */
  private async answer(api: Api, body: Record<string, unknown>, response: ServerResponse, receivedAt: number): Promise<void> {
    let played: ReturnType<ModelServer["take"]>;
    try {
      played = api === "anthropic" ? this.take(anthropicConversation(body), "toolu_") : this.take(openaiConversation(body), "call_");
    } catch (error) {
      return this.refuse(response, error);
    }
    const { index, turn, calls } = played;
    await sleep(turn.latencyMs ?? this.latencyMs);
    const id = `${api === "anthropic" ? "msg" : "resp"}_${randomBytes(12).toString("hex")}`;
    const answer: Answer = { id, model: this.model, text: turn.text ?? "", calls, usage: turn.usage };
    const tailMs = turn.tailMs ?? this.tailMs;
    if (api === "anthropic") await writeMessage(response, body.stream === true, answer, tailMs);
    else await writeResponse(response, answer, receivedAt, tailMs);
    this.responses.push({
      api,
      turn: index,
      id,
      usage: turn.usage,
      calls: calls.map(served),
      text: answer.text,
      receivedAt,
      finishedAt: Date.now(),
    });
  }

  /** Side requests: token counting, a model list, a one-line answer to any other query. */
  private side(path: string, body: Record<string, unknown>, response: ServerResponse): void {
    const json = (status: number, value: unknown) => {
      response.writeHead(status, { "content-type": "application/json" });
      response.end(JSON.stringify(value));
    };
    if (path.endsWith("/count_tokens")) {
      json(200, { input_tokens: 1 });
      return;
    }
    if (path.endsWith("/models")) {
      json(200, { object: "list", data: [{ id: this.model, object: "model", created: 0, owned_by: "test" }], models: [] });
      return;
    }
    if (path.endsWith("/messages")) {
      const usage = { input_tokens: 1, output_tokens: 1, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 };
      void writeMessage(response, body.stream === true, {
        id: `msg_side_${randomBytes(8).toString("hex")}`,
        model: this.model,
        text: "ok",
        calls: [],
        usage,
      });
      return;
    }
    json(404, { type: "error", error: { type: "not_found_error", message: `not scripted: ${path}` } });
  }
}

/** One Responses API response, streamed as the API streams it (SSE): its output items, then `response.completed` with the usage. */
async function writeResponse(response: ServerResponse, answer: Answer, receivedAt: number, tailMs: number): Promise<void> {
  const { id, model, text, calls, usage } = answer;
  const items: Record<string, unknown>[] = [];
  if (text) {
    items.push({
      id: `msg_${randomBytes(8).toString("hex")}`,
      type: "message",
      status: "completed",
      role: "assistant",
      content: [{ type: "output_text", text, annotations: [] }],
    });
  }
  for (const call of calls) {
    const itemId = `fc_${randomBytes(8).toString("hex")}`;
    if (call.kind === "freeform") {
      items.push({ id: itemId, type: "custom_tool_call", status: "completed", call_id: call.id, name: call.name, input: call.input });
    } else if (call.kind === "tool_search") {
      items.push({
        id: itemId,
        type: "tool_search_call",
        status: "completed",
        call_id: call.id,
        execution: "client",
        arguments: call.input,
      });
    } else {
      items.push({
        id: itemId,
        type: "function_call",
        status: "completed",
        call_id: call.id,
        name: call.name,
        ...(call.namespace ? { namespace: call.namespace } : {}),
        arguments: JSON.stringify(call.input),
      });
    }
  }
  const openaiUsage = {
    input_tokens: usage.input_tokens + usage.cache_read_input_tokens,
    input_tokens_details: { cached_tokens: usage.cache_read_input_tokens },
    output_tokens: usage.output_tokens,
    output_tokens_details: { reasoning_tokens: 0 },
    total_tokens: usage.input_tokens + usage.cache_read_input_tokens + usage.output_tokens,
  };
  const base = { id, object: "response", created_at: Math.floor(receivedAt / 1000), model };
  response.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache", "x-request-id": `req_${id}` });
  let sequence = 0;
  const send = (data: Record<string, unknown>) =>
    response.write(`event: ${String(data.type)}\ndata: ${JSON.stringify({ ...data, sequence_number: sequence++ })}\n\n`);
  send({ type: "response.created", response: { ...base, status: "in_progress", output: [] } });
  send({ type: "response.in_progress", response: { ...base, status: "in_progress", output: [] } });
  items.forEach((item, outputIndex) => {
    if (item.type === "message") {
      send({ type: "response.output_item.added", output_index: outputIndex, item: { ...item, status: "in_progress", content: [] } });
      const part = { type: "output_text", text: "", annotations: [] };
      send({ type: "response.content_part.added", item_id: item.id, output_index: outputIndex, content_index: 0, part });
      for (const piece of chunks(text)) {
        send({ type: "response.output_text.delta", item_id: item.id, output_index: outputIndex, content_index: 0, delta: piece });
      }
      send({ type: "response.output_text.done", item_id: item.id, output_index: outputIndex, content_index: 0, text });
      send({
        type: "response.content_part.done",
        item_id: item.id,
        output_index: outputIndex,
        content_index: 0,
        part: { ...part, text },
      });
    } else if (item.type === "function_call") {
      send({ type: "response.output_item.added", output_index: outputIndex, item: { ...item, status: "in_progress", arguments: "" } });
      for (const piece of chunks(String(item.arguments))) {
        send({ type: "response.function_call_arguments.delta", item_id: item.id, output_index: outputIndex, delta: piece });
      }
      send({ type: "response.function_call_arguments.done", item_id: item.id, output_index: outputIndex, arguments: item.arguments });
    } else if (item.type === "custom_tool_call") {
      send({ type: "response.output_item.added", output_index: outputIndex, item: { ...item, status: "in_progress", input: "" } });
      for (const piece of chunks(String(item.input))) {
        send({ type: "response.custom_tool_call_input.delta", item_id: item.id, output_index: outputIndex, delta: piece });
      }
      send({ type: "response.custom_tool_call_input.done", item_id: item.id, output_index: outputIndex, input: item.input });
    } else {
      send({ type: "response.output_item.added", output_index: outputIndex, item: { ...item, status: "in_progress" } });
    }
    send({ type: "response.output_item.done", output_index: outputIndex, item });
  });
  await sleep(tailMs);
  send({ type: "response.completed", response: { ...base, status: "completed", output: items, usage: openaiUsage } });
  response.end();
}

/** One Messages API response: a JSON message, or streamed as the API streams it (SSE). */
async function writeMessage(response: ServerResponse, stream: boolean, answer: Answer, tailMs = 0): Promise<void> {
  const { id, model, text, calls, usage } = answer;
  const blocks: unknown[] = [];
  if (text) blocks.push({ type: "text", text });
  for (const call of calls) blocks.push({ type: "tool_use", id: call.id, name: call.name, input: call.input });
  const stopReason = calls.length > 0 ? "tool_use" : "end_turn";
  const head = { id, type: "message", role: "assistant", model, content: [] as unknown[], stop_reason: null, stop_sequence: null };
  if (!stream) {
    response.writeHead(200, { "content-type": "application/json", "request-id": `req_${id}` });
    response.end(JSON.stringify({ ...head, content: blocks, stop_reason: stopReason, usage }));
    return;
  }
  response.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache", "request-id": `req_${id}` });
  const send = (event: string, data: unknown) => response.write(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
  // As the API streams it: the prompt's counts first (output so far: 1), the output's count at the end.
  send("message_start", { type: "message_start", message: { ...head, usage: { ...usage, output_tokens: 1 } } });
  send("ping", { type: "ping" });
  let index = 0;
  if (text) {
    send("content_block_start", { type: "content_block_start", index, content_block: { type: "text", text: "" } });
    for (const piece of chunks(text))
      send("content_block_delta", { type: "content_block_delta", index, delta: { type: "text_delta", text: piece } });
    send("content_block_stop", { type: "content_block_stop", index });
    index++;
  }
  for (const call of calls) {
    send("content_block_start", {
      type: "content_block_start",
      index,
      content_block: { type: "tool_use", id: call.id, name: call.name, input: {} },
    });
    for (const piece of chunks(JSON.stringify(call.input))) {
      send("content_block_delta", { type: "content_block_delta", index, delta: { type: "input_json_delta", partial_json: piece } });
    }
    send("content_block_stop", { type: "content_block_stop", index });
    index++;
  }
  await sleep(tailMs);
  send("message_delta", { type: "message_delta", delta: { stop_reason: stopReason, stop_sequence: null }, usage });
  send("message_stop", { type: "message_stop" });
  response.end();
}

/** `text` as it appears inside a JSON string (to find it in ModelServer.requestText). */
export function inJson(text: string): string {
  return JSON.stringify(text).slice(1, -1);
}

export function zeroUsage(): Usage {
  return { input_tokens: 0, output_tokens: 0, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 };
}

/** The sum of the usage of some responses. */
export function sumUsage(responses: readonly { usage: Usage }[]): Usage {
  const sum = zeroUsage();
  for (const { usage } of responses) {
    sum.input_tokens += usage.input_tokens;
    sum.output_tokens += usage.output_tokens;
    sum.cache_creation_input_tokens += usage.cache_creation_input_tokens;
    sum.cache_read_input_tokens += usage.cache_read_input_tokens;
  }
  return sum;
}

/** Anthropic tool names offered in a request (deferred tools included, by name). */
export function offeredTools(request: ReceivedRequest): string[] {
  const tools = Array.isArray(request.body.tools) ? (request.body.tools as Record<string, unknown>[]) : [];
  const names: string[] = [];
  for (const tool of tools) {
    if (typeof tool.name === "string") names.push(tool.name);
    // A Codex namespace tool carries its own tools.
    if (Array.isArray(tool.tools))
      for (const inner of tool.tools as Record<string, unknown>[])
        if (typeof inner.name === "string") names.push(`${String(tool.name)}/${inner.name}`);
  }
  return names;
}

function readBody(request: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const parts: Buffer[] = [];
    request.on("data", (part: Buffer) => parts.push(part));
    request.on("end", () => resolve(Buffer.concat(parts).toString("utf8")));
    request.on("error", reject);
  });
}

function sleep(ms: number): Promise<void> {
  return ms > 0 ? new Promise((resolve) => setTimeout(resolve, ms)) : Promise.resolve();
}

/** A streamed text in a few pieces, as a model streams it. */
function chunks(text: string): string[] {
  if (text.length <= 16) return [text];
  const size = Math.ceil(text.length / 3);
  return [text.slice(0, size), text.slice(size, 2 * size), text.slice(2 * size)];
}

function conversationOf(results: Map<string, string[]>): Conversation {
  const of = (name: string) => results.get(name) ?? [];
  return {
    results: of,
    field(name, key) {
      const latest = of(name).at(-1);
      if (latest === undefined) throw new Error(`the agent sent no result of ${name} yet`);
      // The tool's JSON, possibly after the agent's own preamble (Codex: "Wall time: …\nOutput:\n{…}").
      const start = latest.indexOf("{");
      try {
        const parsed: unknown = JSON.parse(start >= 0 ? latest.slice(start) : latest);
        const value = parsed && typeof parsed === "object" ? (parsed as Record<string, unknown>)[key] : undefined;
        if (typeof value === "string") return value;
      } catch {
        // Not JSON: look for a `key: value` line.
      }
      const line = latest.split("\n").find((l) => l.startsWith(`${key}: `));
      if (line === undefined) throw new Error(`the result of ${name} has no field "${key}": ${latest.slice(0, 300)}`);
      return line.slice(key.length + 2).trim();
    },
  };
}

/** The text of a tool result's content: its text blocks, and the names of the tools a tool search loaded. */
function textOf(content: unknown): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return content
    .map((part: unknown) => {
      if (!part || typeof part !== "object") return "";
      const block = part as { text?: unknown; tool_name?: unknown };
      return typeof block.text === "string" ? block.text : typeof block.tool_name === "string" ? block.tool_name : "";
    })
    .join("\n");
}

/** Tool results in a Messages API request, by the name of the tool_use they answer. */
function anthropicConversation(body: Record<string, unknown>): Conversation {
  const names = new Map<string, string>();
  const results = new Map<string, string[]>();
  for (const message of Array.isArray(body.messages) ? (body.messages as Record<string, unknown>[]) : []) {
    if (!Array.isArray(message.content)) continue;
    for (const block of message.content as Record<string, unknown>[]) {
      if (block.type === "tool_use" && typeof block.id === "string" && typeof block.name === "string") names.set(block.id, block.name);
      if (block.type === "tool_result" && typeof block.tool_use_id === "string") {
        const name = names.get(block.tool_use_id) ?? "?";
        results.set(name, [...(results.get(name) ?? []), textOf(block.content)]);
      }
    }
  }
  return conversationOf(results);
}

/** Tool outputs in a Responses API request, by the name of the call they answer. */
function openaiConversation(body: Record<string, unknown>): Conversation {
  const names = new Map<string, string>();
  const results = new Map<string, string[]>();
  for (const item of Array.isArray(body.input) ? (body.input as Record<string, unknown>[]) : []) {
    if ((item.type === "function_call" || item.type === "custom_tool_call") && typeof item.call_id === "string") {
      names.set(item.call_id, String(item.name));
    }
    // A tool search's result: the tools it found, as JSON.
    if (item.type === "tool_search_output")
      results.set("tool_search", [...(results.get("tool_search") ?? []), JSON.stringify(item.tools ?? [])]);
    if ((item.type === "function_call_output" || item.type === "custom_tool_call_output") && typeof item.call_id === "string") {
      const name = names.get(item.call_id) ?? "?";
      const output = typeof item.output === "string" ? item.output : textOf(item.output);
      results.set(name, [...(results.get(name) ?? []), output]);
    }
  }
  return conversationOf(results);
}
