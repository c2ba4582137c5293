/**
 * @module routes/export-api
 * What auditors and CI read to check an export, besides the signing keys (./signing-keys):
 *   GET /schemas/export-v1.json   the JSON export's JSON Schema (2020-12), public and cacheable
 *   GET /schemas/policy-v1.json   the JSON Schema of a repository's `.waymark/policy.yml` (what `waymark ci` enforces)
 * The exports themselves (/api/workflows/:id/export.* for a read token) are workflow reads
 * (./workflow-reads.ts), charged to the account's export budget (./read-budget.ts).
 */

import { POLICY_SCHEMA_PATH } from "@waymark/protocol/policy";
import { Hono } from "hono";
import exportSchema from "../../docs/schemas/export-v1.json";
import policySchema from "../../docs/schemas/policy-v1.json";
import type { AppEnv } from "../http/types";
import { EXPORT_SCHEMA_PATH } from "../pages/export-json";

export const exportApiRoutes = new Hono<AppEnv>();

for (const [path, schema] of [
  [EXPORT_SCHEMA_PATH, exportSchema],
  [POLICY_SCHEMA_PATH, policySchema],
] as const) {
  exportApiRoutes.get(path, (c) => {
    c.header("Cache-Control", "public, max-age=3600");
    c.header("Content-Type", "application/schema+json");
    return c.body(JSON.stringify(schema, null, 2));
  });
}
