import { Hono } from "hono";
import { handleMcp } from "./mcp/endpoint";

export { AccountObject } from "./account/object";
export { WorkflowObject } from "./workflow/object";

const app = new Hono<{ Bindings: Env }>();

app.all("/mcp", (c) => handleMcp(c.req.raw, c.env));
app.get("/health", (c) => c.json({ ok: true }));

export default app;
