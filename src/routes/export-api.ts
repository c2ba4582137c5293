/**
 * @module routes/export-api
 * What auditors and CI read to check an export, besides the signing keys (./signing-keys):
 *   GET /schemas/export-v1.json   the JSON export's JSON Schema (2020-12), public and cacheable
 * The exports themselves (/api/workflows/:id/export.* for a read token) are workflow reads
 * (./workflow-reads.ts), charged to the account's export budget (./read-budget.ts).
 */
import { Hono } from "hono";
import exportSchema from "../../docs/schemas/export-v1.json";
import type { AppEnv } from "../http/types";
import { EXPORT_SCHEMA_PATH } from "../pages/export-json";

export const exportApiRoutes = new Hono<AppEnv>();

exportApiRoutes.get(EXPORT_SCHEMA_PATH, (c) => {
  c.header("Cache-Control", "public, max-age=3600");
  c.header("Content-Type", "application/schema+json");
  return c.body(JSON.stringify(exportSchema, null, 2));
});
