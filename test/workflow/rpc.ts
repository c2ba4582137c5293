/**
 * The WorkflowObject as the MCP layer reaches it: a stub per workflow id, and Results read as
 * values or failures, for tests that call its RPC methods directly.
 */
import { env } from "cloudflare:workers";
import type { Result } from "../../src/errors";
import type { WorkflowObject } from "../../src/workflow/workflow-object";

export function stubFor(workflowId: string): DurableObjectStub<WorkflowObject> {
  return env.WORKFLOW.get(env.WORKFLOW.idFromName(workflowId));
}

export function value<T>(result: Result<T>): T {
  if (!result.ok) throw new Error(`${result.code}: ${result.message}`);
  return result.value;
}

export function failure<T>(result: Result<T>): { code: string; message: string } {
  if (result.ok) throw new Error(`expected a failure, got ${JSON.stringify(result.value)}`);
  return { code: result.code, message: result.message };
}
