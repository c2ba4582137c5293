/**
 * @module pages/stream
 * Rendered chunks as a response body that is pulled, not buffered: the next chunks are
 * rendered only when the client has taken the previous ones, so a page of any length costs
 * the memory of one batch. Agent text on pages gets its bidi controls shown as visible code
 * points here (the markup itself has none).
 */
import { revealBidiControls } from "./format";

/** Chunks are gathered into writes of about this many characters. */
const BATCH_CHARS = 32 * 1024;

export function htmlStream(chunks: AsyncIterable<unknown>): ReadableStream<Uint8Array> {
  const iterator = chunks[Symbol.asyncIterator]();
  const encoder = new TextEncoder();
  return new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        let batch = "";
        try {
          while (batch.length < BATCH_CHARS) {
            const next = await iterator.next();
            if (next.done) {
              if (batch) controller.enqueue(encoder.encode(revealBidiControls(batch)));
              controller.close();
              return;
            }
            batch += String(await next.value);
          }
          controller.enqueue(encoder.encode(revealBidiControls(batch)));
        } catch (error) {
          // The status line is long gone: say so in the page, then end it.
          controller.enqueue(
            encoder.encode(
              `${revealBidiControls(batch)}<p class="alert" id="wf-broken">This page could not be read to the end. Reload it.</p>`,
            ),
          );
          controller.close();
          console.error("page stream failed", error);
        }
      },
      async cancel() {
        await iterator.return?.();
      },
    },
    { highWaterMark: 0 },
  );
}
