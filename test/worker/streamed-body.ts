/**
 * A request body that arrives in 1 MiB chunks, as a client streaming a large upload sends
 * it, counting how many chunks the server pulled: a bounded endpoint stops early.
 */
export function streamedBody(chunks: number, fill = 0x20): { body: ReadableStream<Uint8Array>; pulled: () => number } {
  const chunk = new Uint8Array(1024 * 1024).fill(fill);
  let pulled = 0;
  const body = new ReadableStream<Uint8Array>({
    pull(controller) {
      pulled++;
      if (pulled > chunks) controller.close();
      else controller.enqueue(chunk);
    },
  });
  return { body, pulled: () => pulled };
}
