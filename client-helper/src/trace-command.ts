/**
 * @module trace-command
 * `waymark trace`: a workflow's Agent Trace export (one record per task that committed work,
 * @waymark/protocol/agent-trace), read from the endpoint's API with the helper's token, as is or
 * into a file. `waymark blame` reads the same records (./blame-command.ts).
 */
import { writeFile } from "node:fs/promises";
import { fetchExport } from "./export-fetch.js";

/** The export's text: a JSON array of Agent Trace records. */
export function fetchAgentTrace(origin: string, workflowId: string, token: string | undefined): Promise<string> {
  return fetchExport(origin, workflowId, token, "export.agent-trace.json");
}

/** Prints the export, or writes it to `out` (and says where). */
export async function runTrace(
  request: { origin: string; workflowId: string; token: string | undefined; out?: string },
  print: (text: string) => void,
): Promise<void> {
  const body = await fetchAgentTrace(request.origin, request.workflowId, request.token);
  const records = (JSON.parse(body) as unknown[]).length;
  if (request.out === undefined) {
    print(body);
    return;
  }
  await writeFile(request.out, body);
  print(`wrote ${records} Agent Trace record(s) of workflow ${request.workflowId} to ${request.out}\n`);
}
