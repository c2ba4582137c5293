/**
 * @module hooks/workflow-state
 * A workflow's state as `get_workflow` tells it, for the session-start context. Asking the
 * endpoint takes one round trip, which a session start cannot always afford (the agent waits for
 * the hook): so the state is also kept in the hooks' journal, written by the MCP proxy after each
 * task it starts or completes and by any session start that got an answer in time, and a session
 * start that gets no answer within its budget shows the kept state with its age.
 *
 * The endpoint is asked with one plain JSON-RPC request (the endpoint is stateless: no session to
 * open first), not through the MCP SDK, whose loading alone costs about what starting Node does.
 */

/** The MCP protocol revision the one request is made in (the endpoint speaks it and later ones). */
const PROTOCOL_VERSION = "2025-11-25";

/** The text of a tools/call result, from a JSON answer or the last `data:` event of an SSE one. */
function resultText(body: string): string | null {
  const data = body
    .split("\n")
    .filter((line) => line.startsWith("data:"))
    .map((line) => line.slice(5).trim());
  const message = data.length > 0 ? data.at(-1) : body;
  try {
    const parsed = JSON.parse(message ?? "") as { result?: { isError?: boolean; content?: { type?: string; text?: unknown }[] } };
    if (!parsed.result || parsed.result.isError) return null;
    const text = parsed.result.content?.find((block) => block.type === "text")?.text;
    return typeof text === "string" ? text : null;
  } catch {
    return null;
  }
}

/**
 * `get_workflow {workflow_id}`'s text from the endpoint, or null when it did not answer it within
 * `timeoutMs` (or answered with an error).
 */
export async function fetchWorkflowState(
  url: string,
  token: string | undefined,
  workflowId: string,
  timeoutMs: number,
): Promise<string | null> {
  if (timeoutMs <= 0) return null;
  try {
    const response = await fetch(url, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
        "mcp-protocol-version": PROTOCOL_VERSION,
        ...(token ? { authorization: `Bearer ${token}` } : {}),
      },
      body: JSON.stringify({
        jsonrpc: "2.0",
        id: 1,
        method: "tools/call",
        params: { name: "get_workflow", arguments: { workflow_id: workflowId } },
      }),
      signal: AbortSignal.timeout(timeoutMs),
    });
    if (!response.ok) return null;
    return resultText(await response.text());
  } catch {
    return null;
  }
}

/** How long ago `at` was, as a person says it ("just now", "3 min ago", "2 h ago"). */
export function age(at: number, now: number): string {
  const minutes = Math.floor(Math.max(0, now - at) / 60_000);
  if (minutes < 1) return "just now";
  return minutes < 120 ? `${minutes} min ago` : `${Math.floor(minutes / 60)} h ago`;
}
