/**
 * @module http/bounded-body
 * Reading a body without trusting its size: at most `limit` bytes are read, and a larger body
 * (declared or streamed) is refused with the rest never read. Used for /mcp requests and for the
 * OAuth client metadata documents the Worker fetches.
 */

/** The body's bytes, or null when it is larger than `limit`. */
export async function readBounded(message: Request | Response, limit: number): Promise<Uint8Array | null> {
  const declared = Number(message.headers.get("Content-Length") ?? "NaN");
  if (Number.isFinite(declared) && declared > limit) return null;
  if (!message.body) return new Uint8Array();
  const reader = message.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > limit) {
      await reader.cancel();
      return null;
    }
    chunks.push(value);
  }
  const body = new Uint8Array(size);
  let offset = 0;
  for (const chunk of chunks) {
    body.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return body;
}
