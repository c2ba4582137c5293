/**
 * @module resources — MCP resources: each workflow as `waymark://workflows/{id}` (the shape of its
 * WorkflowView as JSON, each array holding at most its first page: `truncated` then names the
 * URI of the next page of each array that has more), those pages as
 * `waymark://workflows/{id}/{tasks|decisions|issues|milestones}{?cursor}`, one list of a task's
 * record (a task that changed many files lists its first ones: `files_changed.more`) as
 * `waymark://workflows/{id}/tasks/{task_id}/files/{list}{?cursor}`, its event log as
 * `waymark://workflows/{id}/events{?from_seq,limit}` (a page after `from_seq`, with `next_seq` to
 * continue from, like the live page's feed) and the server's self-description as
 * `waymark://server/info`. No read holds a whole workflow: every one is a bounded page
 * (LIMITS.READ_PAGE_ITEMS / READ_PAGE_BYTES). Resources cost nothing in tools/list.
 */
import {
  type McpServer,
  ProtocolError,
  ProtocolErrorCode,
  type ReadResourceResult,
  ResourceNotFoundError,
  ResourceTemplate,
  SUPPORTED_PROTOCOL_VERSIONS,
  UriTemplate,
  type Variables,
} from "@modelcontextprotocol/server";
import { RECORD_KINDS, type RecordKind } from "@waymark/protocol/export-members";
import { WEBHOOK_EVENTS } from "../domain/webhook-events";
import type { Result } from "../errors";
import { isWorkflowId, workflowOfTask } from "../ids";
import { LIMITS } from "../limits";
import * as stubs from "../stubs";
import { FILE_LISTS, type FileList } from "../workflow/task-files";
import { requestContext, type ToolContext } from "./context";

export const SERVER_INFO_URI = "waymark://server/info";
const JSON_TYPE = "application/json";

export const workflowUri = (id: string) => `waymark://workflows/${id}`;

/**
 * The SDK's template matcher needs every query variable present and in order; a follower
 * reasonably sends `?from_seq=12` alone. This one reads the query with URLSearchParams
 * (unknown parameters are kept, so the reader can refuse them by name).
 */
class EventsTemplate extends UriTemplate {
  constructor() {
    super("waymark://workflows/{id}/events{?from_seq,limit}");
  }

  override match(uri: string): Variables | null {
    const match = /^waymark:\/\/workflows\/([^/?#]+)\/events(?:\?([^#]*))?$/.exec(uri);
    if (!match?.[1]) return null;
    const variables: Variables = { id: match[1] };
    for (const [name, value] of new URLSearchParams(match[2] ?? "")) variables[name] = value;
    return variables;
  }
}

/** The next page of one of a workflow's arrays (RECORD_KINDS, in the order the workflow resource lists them). */
export const arrayPageUri = (id: string, kind: RecordKind, cursor: string) =>
  `${workflowUri(id)}/${kind}?cursor=${encodeURIComponent(cursor)}`;

/** `waymark://workflows/{id}/{tasks|decisions|issues|milestones}{?cursor}`; unknown parameters are kept so the reader can refuse them by name. */
class ArrayPageTemplate extends UriTemplate {
  constructor() {
    super("waymark://workflows/{id}/{kind}{?cursor}");
  }

  override match(uri: string): Variables | null {
    const match = /^waymark:\/\/workflows\/([^/?#]+)\/(tasks|decisions|issues|milestones)(?:\?([^#]*))?$/.exec(uri);
    if (!match?.[1] || !match[2]) return null;
    const variables: Variables = { id: match[1], kind: match[2] };
    for (const [name, value] of new URLSearchParams(match[3] ?? "")) variables[name] = value;
    return variables;
  }
}

export const filePageUri = (id: string, taskId: string, list: FileList, cursor: string | null) =>
  `${workflowUri(id)}/tasks/${taskId}/files/${list}${cursor === null ? "" : `?cursor=${encodeURIComponent(cursor)}`}`;

/** `waymark://workflows/{id}/tasks/{task_id}/files/{list}{?cursor}`; unknown parameters are kept so the reader can refuse them by name. */
class FilePageTemplate extends UriTemplate {
  constructor() {
    super("waymark://workflows/{id}/tasks/{task_id}/files/{list}{?cursor}");
  }

  override match(uri: string): Variables | null {
    const match = /^waymark:\/\/workflows\/([^/?#]+)\/tasks\/([^/?#]+)\/files\/([a-z_]+)(?:\?([^#]*))?$/.exec(uri);
    if (!match?.[1] || !match[2] || !match[3]) return null;
    const variables: Variables = { id: match[1], task_id: match[2], list: match[3] };
    for (const [name, value] of new URLSearchParams(match[4] ?? "")) variables[name] = value;
    return variables;
  }
}

function json(uri: URL, value: unknown): ReadResourceResult {
  return { contents: [{ uri: uri.href, mimeType: JSON_TYPE, text: JSON.stringify(value) }] };
}

function invalid(message: string): ProtocolError {
  return new ProtocolError(ProtocolErrorCode.InvalidParams, `INPUT_VALIDATION_ERROR: ${message}`);
}

function notFound(uri: URL, id: string): ResourceNotFoundError {
  return new ResourceNotFoundError(uri.href, `NOT_FOUND: no workflow ${id} in this account`);
}

/** A failed RPC result as an MCP error: NOT_FOUND → resource not found, the rest → invalid params / internal. */
function unwrap<T>(uri: URL, id: string, result: Result<T>): T {
  if (result.ok) return result.value;
  if (result.code === "NOT_FOUND") throw notFound(uri, id);
  if (result.code === "INTERNAL") throw new ProtocolError(ProtocolErrorCode.InternalError, `INTERNAL: ${result.message}`);
  throw invalid(result.message);
}

function single(variables: Variables, name: string): string | undefined {
  const value = variables[name];
  return Array.isArray(value) ? value[0] : value;
}

/** A whole number in [min, max] from a query parameter, or the default when absent. */
function integerParameter(variables: Variables, name: string, fallback: number, min: number, max: number): number {
  const raw = single(variables, name);
  if (raw === undefined || raw === "") return fallback;
  const value = /^\d{1,15}$/.test(raw) ? Number(raw) : Number.NaN;
  if (!Number.isSafeInteger(value) || value < min || value > max) {
    throw invalid(`${name}: must be a whole number from ${min} to ${max}, got "${raw.slice(0, 40)}"`);
  }
  return value;
}

export interface ServerDescription {
  name: string;
  version: string;
  tools: readonly string[];
  prompts: readonly string[];
}

/**
 * The revisions the SDK's handler serves through `server/discover` (the 2026 era); the SDK does not
 * export this list, so a test checks it against what a negotiating client actually gets.
 */
const MODERN_PROTOCOL_VERSIONS = ["2026-07-28"] as const;

/** Every protocol version this endpoint negotiates, newest first. */
export const PROTOCOL_VERSIONS: readonly string[] = [...MODERN_PROTOCOL_VERSIONS, ...SUPPORTED_PROTOCOL_VERSIONS];

export function serverInfo(server: ServerDescription) {
  return {
    server: { name: server.name, version: server.version },
    protocol_versions: PROTOCOL_VERSIONS,
    transports: { http: { path: "/mcp", stateless: true, json_and_sse: true } },
    features: {
      tools: server.tools,
      prompts: server.prompts,
      resources: [
        SERVER_INFO_URI,
        "waymark://workflows/{id}",
        "waymark://workflows/{id}/{kind}{?cursor}",
        "waymark://workflows/{id}/tasks/{task_id}/files/{list}{?cursor}",
        "waymark://workflows/{id}/events{?from_seq,limit}",
        "waymark://review/{id}",
        "ui://waymark/review",
      ],
      subscriptions: { resources: ["waymark://workflows/{id}"], methods: ["subscriptions/listen", "resources/subscribe"] },
      apps: { resource: "ui://waymark/review" },
      idempotency_keys: true,
      resume_by_name: true,
      memory_search: true,
      metrics: true,
      share_pages: true,
      webhooks: { events: WEBHOOK_EVENTS, api: "/api/webhooks" },
    },
    limits: {
      max_input_bytes: LIMITS.MAX_BODY_BYTES,
      tool_count: server.tools.length,
      events_page: LIMITS.EVENTS_PAGE,
      read_page_items: LIMITS.READ_PAGE_ITEMS,
      read_page_bytes: LIMITS.READ_PAGE_BYTES,
      tasks_per_workflow: LIMITS.TASKS_PER_WORKFLOW,
      logs_per_task: LIMITS.LOGS_PER_TASK,
      change_entries: LIMITS.CHANGE_ENTRIES,
      search_results: LIMITS.SEARCH_RESULTS,
      related_items: LIMITS.RELATED_ITEMS,
      memory_documents: LIMITS.MEMORY_DOCUMENTS,
      webhooks: LIMITS.WEBHOOKS,
      webhook_attempts: LIMITS.WEBHOOK_ATTEMPTS,
      webhook_queue: LIMITS.WEBHOOK_QUEUE,
    },
  };
}

const LISTED_WORKFLOWS = 200;

/** Parsed once per isolate: it depends on nothing in the request. */
const EVENTS_TEMPLATE = new ResourceTemplate(new EventsTemplate(), { list: undefined });
const ARRAY_PAGE_TEMPLATE = new ResourceTemplate(new ArrayPageTemplate(), { list: undefined });
const FILE_PAGE_TEMPLATE = new ResourceTemplate(new FilePageTemplate(), { list: undefined });

/** What a truncated workflow resource says about reading the rest. */
const TRUNCATED_HOW =
  "Each array named here holds its first page only: read its `next` URI, then the `next` of each page, until it is null.";

/** The resources; each handler acts for the account of the request it serves (requestContext). */
export function registerResources(server: McpServer, description: ServerDescription): void {
  server.registerResource(
    "server-info",
    SERVER_INFO_URI,
    { title: "Waymark server info", description: "Version, protocol versions, features, limits", mimeType: JSON_TYPE },
    (uri) => json(uri, serverInfo(description)),
  );

  const workflowStub = (ctx: ToolContext, uri: URL, id: string) => {
    if (!isWorkflowId(id)) throw notFound(uri, id);
    return stubs.workflowStub(ctx.env, id);
  };

  server.registerResource(
    "workflow",
    new ResourceTemplate("waymark://workflows/{id}", {
      list: async (request) => {
        const ctx = requestContext(request);
        const account = stubs.accountStub(ctx.env, ctx.account);
        const workflows = await account.listWorkflows({ limit: LISTED_WORKFLOWS });
        return {
          resources: workflows.map((w) => ({
            uri: workflowUri(w.id),
            name: w.name,
            description: `${w.status}, ${w.open_tasks} open task(s) of ${w.tasks}, updated ${w.updated_at}`,
            mimeType: JSON_TYPE,
          })),
        };
      },
    }),
    {
      description: `A workflow (tasks, decisions, issues, milestones, totals): each array's first page (at most ${LIMITS.READ_PAGE_ITEMS}); \`truncated\` names the next page's URI of each array that has more`,
      mimeType: JSON_TYPE,
    },
    async (uri, variables, request) => {
      const ctx = requestContext(request);
      const id = single(variables, "id") ?? "";
      const stub = workflowStub(ctx, uri, id);
      const head = unwrap(uri, id, await stub.readHead(ctx.account, false));
      // One page per array, one after the other: the resource is never more than four pages.
      const arrays: Partial<Record<RecordKind, unknown[]>> = {};
      const truncated: Partial<Record<RecordKind, { next_cursor: string; next: string }>> = {};
      for (const kind of RECORD_KINDS) {
        const page = unwrap(uri, id, await stub.readRows(ctx.account, kind, null, LIMITS.READ_PAGE_ITEMS));
        arrays[kind] = page.rows;
        if (page.next_cursor) truncated[kind] = { next_cursor: page.next_cursor, next: arrayPageUri(id, kind, page.next_cursor) };
      }
      const view = { workflow: head.workflow, ...arrays, totals: head.totals, last_seq: head.last_seq, chain: head.chain };
      return json(uri, Object.keys(truncated).length === 0 ? view : { ...view, truncated: { ...truncated, how: TRUNCATED_HOW } });
    },
  );

  server.registerResource(
    "workflow-array-page",
    ARRAY_PAGE_TEMPLATE,
    {
      description:
        "The next page of one of a workflow's arrays (tasks, decisions, issues, milestones), from a workflow resource's `truncated` or a page's `next`",
      mimeType: JSON_TYPE,
    },
    async (uri, variables, request) => {
      const ctx = requestContext(request);
      const id = single(variables, "id") ?? "";
      const kind = single(variables, "kind") as RecordKind;
      const unknown = Object.keys(variables).filter((name) => !["id", "kind", "cursor"].includes(name));
      if (unknown.length > 0) throw invalid(`unknown parameter(s): ${unknown.join(", ")}; accepted: cursor`);
      const cursor = single(variables, "cursor") || null;
      const page = unwrap(uri, id, await workflowStub(ctx, uri, id).readRows(ctx.account, kind, cursor, LIMITS.READ_PAGE_ITEMS));
      return json(uri, {
        [kind]: page.rows,
        next_cursor: page.next_cursor,
        next: page.next_cursor ? arrayPageUri(id, kind, page.next_cursor) : null,
      });
    },
  );

  server.registerResource(
    "task-file-page",
    FILE_PAGE_TEMPLATE,
    {
      description: `One list of a task's record (${FILE_LISTS.join(", ")}), a page of at most ${LIMITS.FILE_PAGE_ITEMS}; continue with \`next\``,
      mimeType: JSON_TYPE,
    },
    async (uri, variables, request) => {
      const ctx = requestContext(request);
      const id = single(variables, "id") ?? "";
      const taskId = single(variables, "task_id") ?? "";
      const list = single(variables, "list") ?? "";
      const unknown = Object.keys(variables).filter((name) => !["id", "task_id", "list", "cursor"].includes(name));
      if (unknown.length > 0) throw invalid(`unknown parameter(s): ${unknown.join(", ")}; accepted: cursor`);
      if (!(FILE_LISTS as readonly string[]).includes(list)) throw invalid(`list: must be one of ${FILE_LISTS.join(", ")}`);
      if (workflowOfTask(taskId) !== id) throw notFound(uri, id);
      const cursor = single(variables, "cursor") || null;
      const page = unwrap(
        uri,
        id,
        await workflowStub(ctx, uri, id).readFiles(ctx.account, taskId, list as FileList, cursor, LIMITS.FILE_PAGE_ITEMS),
      );
      return json(uri, {
        [list]: page.items,
        next_cursor: page.next_cursor,
        next: page.next_cursor ? filePageUri(id, taskId, list as FileList, page.next_cursor) : null,
      });
    },
  );

  server.registerResource(
    "workflow-events",
    EVENTS_TEMPLATE,
    {
      description: `A workflow's event log after from_seq (default 0), at most limit (default and max ${LIMITS.EVENTS_PAGE}); continue from next_seq`,
      mimeType: JSON_TYPE,
    },
    async (uri, variables, request) => {
      const ctx = requestContext(request);
      const id = single(variables, "id") ?? "";
      const unknown = Object.keys(variables).filter((name) => !["id", "from_seq", "limit"].includes(name));
      if (unknown.length > 0) throw invalid(`unknown parameter(s): ${unknown.join(", ")}; accepted: from_seq, limit`);
      const fromSeq = integerParameter(variables, "from_seq", 0, 0, Number.MAX_SAFE_INTEGER);
      const limit = integerParameter(variables, "limit", LIMITS.EVENTS_PAGE, 1, LIMITS.EVENTS_PAGE);
      const page = unwrap(uri, id, await workflowStub(ctx, uri, id).events(ctx.account, fromSeq, limit));
      if (fromSeq > page.last_seq) throw invalid(`from_seq: ${fromSeq} is beyond the last event (seq ${page.last_seq})`);
      return json(uri, { events: page.events, next_seq: page.next_seq, has_more: page.has_more });
    },
  );
}
