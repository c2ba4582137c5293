/**
 * @module stubs
 * The Durable Object of one workflow or one account, found by name: the one lookup the Worker
 * and the two objects (which call each other through their bindings) use; its calls are counted
 * while the deployment meters itself (src/meter.ts).
 *
 * A name's id is kept per isolate: `idFromName` derives it with an HMAC each time, and an id is a
 * plain value any request may use (a stub is not: it belongs to the request that made it, so
 * each call still makes its own).
 */
import { meteredStub } from "./meter";

/** How many names' ids one namespace keeps before it starts again (an isolate serves many accounts and workflows). */
const IDS_KEPT = 4096;
const ids = new WeakMap<DurableObjectNamespace, Map<string, DurableObjectId>>();

function idOf(namespace: DurableObjectNamespace, name: string): DurableObjectId {
  let kept = ids.get(namespace);
  if (!kept) {
    kept = new Map();
    ids.set(namespace, kept);
  }
  let id = kept.get(name);
  if (!id) {
    id = namespace.idFromName(name);
    if (kept.size >= IDS_KEPT) kept.clear();
    kept.set(name, id);
  }
  return id;
}

export function workflowStub(env: Pick<Env, "WORKFLOW">, workflowId: string) {
  return meteredStub("workflow", env.WORKFLOW.get(idOf(env.WORKFLOW, workflowId)));
}

export function accountStub(env: Pick<Env, "ACCOUNT">, account: string) {
  return meteredStub("account", env.ACCOUNT.get(idOf(env.ACCOUNT, account)));
}
