/**
 * @module stubs
 * The Durable Object of one workflow or one account, found by name: the one lookup the Worker
 * and the two objects (which call each other through their bindings) use; its calls are counted
 * while the deployment meters itself (src/meter.ts).
 */
import { meteredStub } from "./meter";

export function workflowStub(env: Pick<Env, "WORKFLOW">, workflowId: string) {
  return meteredStub("workflow", env.WORKFLOW.get(env.WORKFLOW.idFromName(workflowId)));
}

export function accountStub(env: Pick<Env, "ACCOUNT">, account: string) {
  return meteredStub("account", env.ACCOUNT.get(env.ACCOUNT.idFromName(account)));
}
