/**
 * @module http/validate
 * Request validation with hono/validator and zod: the first problem becomes a
 * `{code: "INPUT_VALIDATION_ERROR", message: "<field>: <rule>"}` answer (JSON APIs) or a
 * plain-text 400 (dashboard forms). Body size is bounded before anything is parsed.
 */
import type { Context, MiddlewareHandler } from "hono";
import { bodyLimit } from "hono/body-limit";
import { validator } from "hono/validator";
import type { z } from "zod";
import { apiError } from "./api-errors";

/** "field: rule" for the first issue zod found. */
export function describeProblem(error: z.ZodError): string {
  const issue = error.issues[0];
  if (!issue) return "body: is not valid";
  if (issue.code === "unrecognized_keys") return `${issue.keys.join(", ")}: unknown field${issue.keys.length > 1 ? "s" : ""}`;
  return `${issue.path.length > 0 ? issue.path.join(".") : "body"}: ${issue.message}`;
}

export function jsonBody<S extends z.ZodType>(schema: S) {
  return validator("json", (value, c): z.output<S> | Response => {
    const result = schema.safeParse(value);
    return result.success ? result.data : apiError(c, "INPUT_VALIDATION_ERROR", describeProblem(result.error));
  });
}

export function formBody<S extends z.ZodType>(schema: S) {
  return validator("form", (value, c): z.output<S> | Response => {
    const result = schema.safeParse(value);
    return result.success ? result.data : c.text(describeProblem(result.error), 400);
  });
}

export function jsonQuery<S extends z.ZodType>(schema: S) {
  return validator("query", (value, c): z.output<S> | Response => {
    const result = schema.safeParse(value);
    return result.success ? result.data : apiError(c, "INPUT_VALIDATION_ERROR", describeProblem(result.error));
  });
}

/** Refuses a body over `maxBytes` (declared or streamed) before any handler reads it. */
export function limitBody(maxBytes: number): MiddlewareHandler {
  return bodyLimit({
    maxSize: maxBytes,
    onError: (c: Context) => apiError(c, "PAYLOAD_TOO_LARGE", `body: must be at most ${maxBytes} bytes`),
  });
}
