import { Hono } from "hono";
import { accountRoutes } from "./account/routes";
import { handleMcp } from "./mcp/endpoint";
import { pageRoutes } from "./pages/routes";

export { AccountObject } from "./account/object";
export { WorkflowObject } from "./workflow/object";

const app = new Hono<{ Bindings: Env }>();

app.all("/mcp", (c) => handleMcp(c.req.raw, c.env));
app.get("/health", (c) => c.json({ ok: true }));
app.route("/", accountRoutes); // memory search and webhooks API (issue 5)
app.route("/", pageRoutes); // shared pages, exports, live feed, dashboard, share API (issue 4)

export default app;
