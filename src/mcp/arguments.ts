/**
 * @module arguments — how tool inputs meet the SDK: the JSON Schemas advertised in tools/list
 * (computed once per isolate) and our own validation, whose errors name the field and the rule.
 */
import type { StandardSchemaWithJSON } from "@modelcontextprotocol/server";
import { HELPER_INPUT_NAMES } from "@waymark/protocol/wire";
import { z } from "zod";
import { type ErrorCode, fail, ok, type Result } from "../errors";

/** Keys whose values the helper fills; null there is data (an absent file), not "unset". */
const HELPER_FIELDS = HELPER_INPUT_NAMES;
/** Our own bounds are enforced and documented but not advertised: every byte of tools/list costs the agent context. */
const UNADVERTISED_KEYWORDS = new Set([
  "$schema",
  "maxLength",
  "maxItems",
  "minLength",
  "minItems",
  "pattern",
  "additionalProperties",
  "propertyNames",
]);

function stripKeywords(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(stripKeywords);
  if (node === null || typeof node !== "object") return node;
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(node)) {
    if (!UNADVERTISED_KEYWORDS.has(key)) out[key] = key === "properties" ? mapValues(value, stripKeywords) : stripKeywords(value);
  }
  return out;
}

function mapValues(record: unknown, fn: (v: unknown) => unknown): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(record as Record<string, unknown>)) out[key] = fn(value);
  return out;
}

/** A fixed JSON Schema for tools/list, with a validator that lets everything through. */
function advertised(json: Record<string, unknown>): StandardSchemaWithJSON {
  return {
    "~standard": {
      version: 1,
      vendor: "waymark",
      validate: (value: unknown) => ({ value }),
      jsonSchema: { input: () => json, output: () => json },
    },
  };
}

/**
 * What the SDK sees of a tool's input: zod's JSON Schema, trimmed, with a validator
 * that lets everything through. We validate ourselves in `parseArguments` so every
 * failure carries our error code and names the field and the rule. The helper's own inputs
 * (snapshot, changes, repository) are left out: only the helper sends them, and it knows them.
 */
export function advertise(schema: z.ZodType, opaque: Record<string, string> = {}): StandardSchemaWithJSON {
  const json = stripKeywords(z.toJSONSchema(schema, { io: "input", unrepresentable: "any" })) as Record<string, unknown>;
  const properties = json.properties as Record<string, unknown>;
  for (const field of HELPER_FIELDS) delete properties[field];
  // Inputs whose shape would cost more context than it helps are advertised as objects described in one line.
  for (const [field, description] of Object.entries(opaque)) properties[field] = { type: "object", description };
  return advertised(json);
}

/**
 * A tool's advertised output schema: every top-level field it can return, by name (typed clients
 * such as fastmcp drop fields the schema does not list). The fields' shapes are left open, nested
 * ones and scalars alike: results are built by our own code and tested (docs/tools.md documents
 * each), so spelling them out would only spend the agent's context.
 */
export function outputShape(fields: readonly string[]): StandardSchemaWithJSON {
  return advertised({ type: "object", properties: Object.fromEntries(fields.map((name) => [name, {}])) });
}

/** JSON null for an optional field means "not given" (the reference says parent_task_id is null for top-level tasks). */
function dropNulls(value: unknown, insideHelperData = false): unknown {
  if (Array.isArray(value)) return value.map((v) => dropNulls(v, insideHelperData));
  if (value === null || typeof value !== "object" || insideHelperData) return value;
  const out: Record<string, unknown> = {};
  for (const [key, v] of Object.entries(value)) {
    if (v !== null) out[key] = dropNulls(v, HELPER_FIELDS.has(key));
  }
  return out;
}

function fieldPath(path: readonly PropertyKey[]): string {
  let out = "";
  for (const part of path) out += typeof part === "number" ? `[${part}]` : out ? `.${String(part)}` : String(part);
  return out || "arguments";
}

function describeIssue(issue: z.core.$ZodIssue): string {
  switch (issue.code) {
    case "invalid_type":
      return /received undefined$/.test(issue.message)
        ? "is required"
        : `must be ${issue.expected === "array" ? "an array" : `a ${issue.expected}`}`;
    case "too_big":
      return issue.origin === "string"
        ? `must be at most ${issue.maximum} characters`
        : issue.origin === "array"
          ? `must have at most ${issue.maximum} items`
          : `must be ${issue.inclusive ? "≤" : "<"} ${issue.maximum}`;
    case "too_small":
      return issue.origin === "string"
        ? "must not be empty"
        : issue.origin === "array"
          ? `must have at least ${issue.minimum} items`
          : `must be ${issue.inclusive ? "≥" : ">"} ${issue.minimum}`;
    case "invalid_value":
      return `must be one of: ${issue.values.map(String).join(", ")}`;
    case "unrecognized_keys":
      return `unknown field(s): ${issue.keys.join(", ")}`;
    case "invalid_union":
      return "does not match any accepted shape";
    default:
      return issue.message;
  }
}

/**
 * Deeper than any real argument: the deepest input, metadata, is at most 4 KB of JSON. Checked
 * before anything else because dropNulls and the validators recurse: 5,000 levels of `[[[…]]]`
 * overflowed the stack and the tool answered without an error code.
 */
export const MAX_ARGUMENT_DEPTH = 64;

/** Whether a JSON value nests deeper than `limit` objects/arrays; iterative, so any depth is safe. */
function nestsDeeperThan(value: unknown, limit: number): boolean {
  const stack: [unknown, number][] = [[value, 0]];
  for (let item = stack.pop(); item !== undefined; item = stack.pop()) {
    const [node, depth] = item;
    if (node === null || typeof node !== "object") continue;
    if (depth >= limit) return true;
    for (const child of Object.values(node)) if (child !== null && typeof child === "object") stack.push([child, depth + 1]);
  }
  return false;
}

/** Validates tool arguments; the error names each failing field and the rule it broke. */
export function parseArguments<T>(schema: z.ZodType<T>, args: unknown): Result<T> {
  if (nestsDeeperThan(args, MAX_ARGUMENT_DEPTH)) {
    return fail("INPUT_VALIDATION_ERROR", `arguments: must not nest deeper than ${MAX_ARGUMENT_DEPTH} levels of objects and arrays`);
  }
  const parsed = schema.safeParse(dropNulls(args ?? {}));
  if (parsed.success) return ok(parsed.data);
  const issues = parsed.error.issues;
  const tooLarge = issues.some((i) => i.code === "too_big" && i.origin === "array" && HELPER_FIELDS.has(String(i.path[0])));
  const code: ErrorCode = tooLarge ? "PAYLOAD_TOO_LARGE" : "INPUT_VALIDATION_ERROR";
  const shown = issues.slice(0, 5).map((i) => {
    const path = i.code === "unrecognized_keys" ? fieldPath(i.path) : fieldPath(i.path);
    return `${path}: ${describeIssue(i)}`;
  });
  const more = issues.length > shown.length ? ` (+${issues.length - shown.length} more)` : "";
  return fail(code, `${shown.join("; ")}${more}`);
}
