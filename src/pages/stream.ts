/**
 * @module pages/stream
 * A page's rendered chunks as a response body (text-stream.ts: pulled, not buffered, so a page
 * of any length costs the memory of one batch). Agent text gets its bidi controls shown as
 * visible code points here (the markup itself has none), and a read that fails after the
 * status line went out ends the page with a note instead of a silently truncated page.
 */
import { revealBidiControls } from "./format";
import { textStream } from "./text-stream";

async function* shownPieces(chunks: AsyncIterable<unknown>): AsyncGenerator<string> {
  try {
    for await (const chunk of chunks) yield revealBidiControls(String(await chunk));
  } catch (error) {
    console.error("page stream failed", error);
    yield `<p class="alert" id="wf-broken">This page could not be read to the end. Reload it.</p>`;
  }
}

export function htmlStream(chunks: AsyncIterable<unknown>): ReadableStream<Uint8Array> {
  return textStream(shownPieces(chunks));
}
