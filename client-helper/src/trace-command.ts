/**
 * @module trace-command
 * `waymark trace`: a workflow's Agent Trace export (one record per task that committed work,
 * @waymark/protocol/agent-trace), read from the endpoint's API with the helper's token, as is or
 * into a file. `waymark blame` reads the same records (./blame-command.ts).
 */
import { writeFile } from "node:fs/promises";

const FETCH_TIMEOUT_MS = 60_000;

/** A failure reading the export; the message says what to check. */
export class TraceFetchError extends Error {}

/** The export's text: a JSON array of Agent Trace records. */
export async function fetchAgentTrace(origin: string, workflowId: string, token: string | undefined): Promise<string> {
  if (!/^[A-Za-z0-9_-]{1,64}$/.test(workflowId))
    throw new TraceFetchError(`--workflow: must be a workflow id, got ${JSON.stringify(workflowId)}`);
  const url = `${origin}/api/workflows/${workflowId}/export.agent-trace.json`;
  let response: Response;
  try {
    response = await fetch(url, {
      headers: token ? { Authorization: `Bearer ${token}` } : {},
      signal: AbortSignal.timeout(FETCH_TIMEOUT_MS),
      redirect: "error",
    });
  } catch (error) {
    throw new TraceFetchError(`cannot read ${url}: ${(error as Error).message}`);
  }
  const body = await response.text();
  if (!response.ok) {
    const reason = response.status === 401 ? " (set WAYMARK_TOKEN or pass --token)" : "";
    throw new TraceFetchError(`${url} answered HTTP ${response.status}${reason}: ${body.slice(0, 300)}`);
  }
  return body;
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
