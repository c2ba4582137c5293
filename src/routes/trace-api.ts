/**
 * @module routes/trace-api
 * The Agent Trace export for scripts and CI (what `waymark trace` reads):
 *   GET /api/workflows/:id/export.agent-trace.json  bearer token or session (read)
 * The same document as the owner's /w/:id/export.agent-trace.json (src/pages/export-agent-trace.ts),
 * each record linked to the task on the owner's page.
 */
import { Hono } from "hono";
import { apiError } from "../http/api-errors";
import { requireAccount } from "../http/require-account";
import { dataHeaders, noStore } from "../http/security-headers";
import type { AppEnv } from "../http/types";
import { isWorkflowId } from "../ids";
import { agentTraceExport } from "../pages/export-agent-trace";
import { textStream } from "../pages/text-stream";
import { workflowStub } from "../stubs";

export const traceApiRoutes = new Hono<AppEnv>();

const TRACE_PATH = "/api/workflows/:id/export.agent-trace.json";

traceApiRoutes.use(TRACE_PATH, noStore, dataHeaders, requireAccount({ bearer: true, session: true, otherwise: "json", scope: "read" }));

traceApiRoutes.get(TRACE_PATH, async (c) => {
  const id = c.req.param("id");
  const missing = () => apiError(c, "NOT_FOUND", `workflow_id: no workflow ${id} in this account`);
  if (!isWorkflowId(id)) return missing();
  const stub = workflowStub(c.env, id);
  const head = await stub.readHead(c.var.account, true);
  if (!head.ok) return head.code === "NOT_FOUND" ? missing() : apiError(c, head.code, head.message);
  const page = `${new URL(c.req.url).origin}/w/${id}`;
  return c.body(textStream(agentTraceExport(stub, c.var.account, head.value, page)), 200, {
    "Content-Type": "application/json; charset=utf-8",
  });
});
