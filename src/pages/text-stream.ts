/**
 * @module pages/text-stream
 * A response body from an async sequence of text pieces: pulled only as the client reads
 * (the next page is not asked for until the previous one is on its way), small pieces gathered
 * into chunks of a few KiB so a 5,000-task export is not 100,000 tiny writes.
 */
const CHUNK_CHARACTERS = 32 * 1024;

export function textStream(pieces: AsyncIterable<string>): ReadableStream<Uint8Array> {
  const encoder = new TextEncoder();
  const iterator = pieces[Symbol.asyncIterator]();
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      let chunk = "";
      while (chunk.length < CHUNK_CHARACTERS) {
        const next = await iterator.next();
        if (next.done) {
          if (chunk) controller.enqueue(encoder.encode(chunk));
          controller.close();
          return;
        }
        chunk += next.value;
      }
      controller.enqueue(encoder.encode(chunk));
    },
    async cancel() {
      await iterator.return?.();
    },
  });
}
