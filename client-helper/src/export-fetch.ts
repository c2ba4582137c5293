/**
 * @module export-fetch
 * One of a workflow's exports read from the endpoint's API (`GET <origin>/api/workflows/<id>/<file>`)
 * with the helper's token: the Markdown export for `waymark summary`, the Agent Trace records for
 * `waymark trace` and `waymark blame`. Also the workflow's share link as it is now, for the page
 * link a summary carries.
 */

const FETCH_TIMEOUT_MS = 60_000;

/** A failure reading from the endpoint's API; the message says what to check. */
export class ExportFetchError extends Error {}

type ExportFile = "export.md" | "export.agent-trace.json";

function workflowUrl(origin: string, workflowId: string, path: string): string {
  if (!/^[A-Za-z0-9_-]{1,64}$/.test(workflowId))
    throw new ExportFetchError(`--workflow: must be a workflow id, got ${JSON.stringify(workflowId)}`);
  return `${origin}/api/workflows/${workflowId}/${path}`;
}

async function get(url: string, token: string | undefined): Promise<Response> {
  try {
    return await fetch(url, {
      headers: token ? { Authorization: `Bearer ${token}` } : {},
      signal: AbortSignal.timeout(FETCH_TIMEOUT_MS),
      redirect: "error",
    });
  } catch (error) {
    throw new ExportFetchError(`cannot read ${url}: ${(error as Error).message}`);
  }
}

async function refused(url: string, response: Response): Promise<ExportFetchError> {
  const reason = response.status === 401 ? " (set WAYMARK_TOKEN or pass --token)" : "";
  return new ExportFetchError(`${url} answered HTTP ${response.status}${reason}: ${(await response.text()).slice(0, 300)}`);
}

/** The export's text, as the endpoint serves it. */
export async function fetchExport(origin: string, workflowId: string, token: string | undefined, file: ExportFile): Promise<string> {
  const url = workflowUrl(origin, workflowId, file);
  const response = await get(url, token);
  if (!response.ok) throw await refused(url, response);
  return response.text();
}

/** The workflow's share link now: its URL while it is active, else null with its state (revoked, expired, none). */
export async function currentShareLink(
  origin: string,
  workflowId: string,
  token: string | undefined,
): Promise<{ url: string } | { url: null; status: string }> {
  const url = workflowUrl(origin, workflowId, "share");
  const response = await get(url, token);
  if (!response.ok) throw await refused(url, response);
  const body = (await response.json().catch(() => null)) as { status?: unknown; share_url?: unknown } | null;
  if (body?.status === "active" && typeof body.share_url === "string") return { url: body.share_url };
  return { url: null, status: typeof body?.status === "string" ? body.status : "unknown" };
}
