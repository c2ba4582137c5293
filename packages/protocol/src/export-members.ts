/**
 * @module export-members
 * The members of a JSON export, the path of its schema, and the type and version of the statement
 * signed over them: plain values (no zod), which the Worker's export, the signer and the verifier
 * (./statement.ts) and the export's schema (./views/export.ts, which checks its members are
 * exactly these) all read.
 */

/** Where every endpoint serves the export's JSON Schema (its version is in the name). */
export const EXPORT_SCHEMA_PATH = "/schemas/export-v1.json";

export const STATEMENT_TYPE = "waymark.export-statement";
/**
 * 3: the payload also names the account (`account`, a digest) and the deployment (`origin`);
 * 2 signed the content (`content`) without them, and verifiers still read it; version 1 was never
 * issued by an export.
 */
export const STATEMENT_VERSION = 3;
export const STATEMENT_VERSIONS_READ = [2, 3] as const;
/**
 * The members of a JSON export, in the order it writes them (the statement comes last, signed
 * over the others; `feedback` is absent from exports that do not carry it).
 */
export const EXPORT_MEMBERS = [
  "$schema",
  "workflow",
  "tasks",
  "decisions",
  "issues",
  "milestones",
  "totals",
  "last_seq",
  "chain",
  "events",
  "feedback",
  "review",
  "device_signed",
] as const;
export type ExportMember = (typeof EXPORT_MEMBERS)[number];
/** The members that are arrays of records, in the whole view's order: the export and the resource page through them. */
export const RECORD_KINDS = ["tasks", "decisions", "issues", "milestones"] as const satisfies readonly ExportMember[];
export type RecordKind = (typeof RECORD_KINDS)[number];
export type ContentDigests = Partial<Record<ExportMember, string>>;
