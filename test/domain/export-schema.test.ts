/**
 * The export's JSON Schema is the read model's: docs/schemas/export-v1.json (served at
 * /schemas/export-v1.json) is what z.toJSONSchema makes of @waymark/protocol/views/export, so a
 * field added to a view and not to the published schema fails here (CI also runs
 * `npm run schemas -- --check`, which compares the bytes).
 */
import { EXPORT_MEMBERS } from "@waymark/protocol/export-members";
import { exportJsonSchema, exportSchema } from "@waymark/protocol/views/export";
import { describe, expect, it } from "vitest";
import committed from "../../docs/schemas/export-v1.json";

describe("the export's JSON Schema", () => {
  it("is generated from the views: the committed file is current", () => {
    expect(committed).toEqual(exportJsonSchema());
  });

  it("is closed, and names every member the statement covers", () => {
    expect(Object.keys(exportSchema.shape)).toEqual([...EXPORT_MEMBERS, "statement"]);
    expect(committed.additionalProperties).toBe(false);
    const defs = committed.$defs as Record<string, { additionalProperties?: unknown }>;
    for (const name of [
      "workflow",
      "task",
      "filesChanged",
      "verification",
      "decision",
      "issue",
      "milestone",
      "feedback",
      "totals",
      "chain",
    ]) {
      expect(defs[name]?.additionalProperties, name).toBe(false);
    }
  });
});
