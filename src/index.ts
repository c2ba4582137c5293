import { Hono } from "hono";
import { handleMcp } from "./mcp/endpoint";

export { WorkflowObject } from "./workflow/object";
export { AccountObject } from "./account/object";

const app = new Hono<{ Bindings: Env }>();

app.all("/mcp", (c) => handleMcp(c.req.raw, c.env, c.executionCtx as ExecutionContext));
app.get("/health", (c) => c.json({ ok: true }));

export default app;
