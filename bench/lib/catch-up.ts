/**
 * What one live socket of a share link costs the server: the bytes it receives for the
 * catch-up from `after=0` until "caught_up" (pulling each page the object announces with
 * {"type":"more","seq":n}, as the page does), then the bytes it receives after asking again
 * with {"after":0} several times (a follower that re-asks must not make the object re-send its
 * whole log each time). Bounded by an overall deadline and an idle timeout.
 */
export interface CatchUpBytes {
  /** Bytes of the first catch-up, through its "caught_up". */
  first: number;
  events: number;
  /** Pages the object announced with "more" (0 when it sends the whole log at once). */
  pages: number;
  /** Bytes received after the re-asks, until the socket was quiet for `idleMs`. */
  afterResends: number;
  resends: number;
  /** "caught_up" messages answered to the re-asks. */
  resendCatchUps: number;
  ms: number;
}

export function measureCatchUp(shareUrl: string, options: { resends: number; idleMs: number; deadlineMs: number }): Promise<CatchUpBytes> {
  const url = `${shareUrl.replace(/^http/, "ws")}/ws?after=0`;
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const socket = new WebSocket(url);
    const result: CatchUpBytes = { first: 0, events: 0, pages: 0, afterResends: 0, resends: options.resends, resendCatchUps: 0, ms: 0 };
    let caughtUp = false;
    let idle: ReturnType<typeof setTimeout> | undefined;
    let finished = false;
    const finish = (error?: Error) => {
      if (finished) return;
      finished = true;
      clearTimeout(deadline);
      clearTimeout(idle);
      socket.close();
      result.ms = performance.now() - started;
      if (error) reject(error);
      else resolve(result);
    };
    const deadline = setTimeout(
      () => (caughtUp ? finish() : finish(new Error(`no caught_up from ${url} within ${options.deadlineMs} ms`))),
      options.deadlineMs,
    );
    socket.addEventListener("message", (message) => {
      const text = typeof message.data === "string" ? message.data : String(message.data);
      const size = Buffer.byteLength(text);
      const body = JSON.parse(text) as { type?: string; seq?: number };
      const type = body.type;
      if (!caughtUp) {
        result.first += size;
        if (type === "event") result.events++;
        if (type === "more") {
          result.pages++;
          socket.send(JSON.stringify({ after: body.seq }));
        }
        if (type === "caught_up") {
          caughtUp = true;
          for (let i = 0; i < options.resends; i++) socket.send(JSON.stringify({ after: 0 }));
          idle = setTimeout(() => finish(), options.idleMs);
        }
        return;
      }
      result.afterResends += size;
      if (type === "caught_up") result.resendCatchUps++;
      clearTimeout(idle);
      idle = setTimeout(() => finish(), options.idleMs);
    });
    socket.addEventListener("error", () => finish(new Error(`WebSocket ${url} failed`)));
    socket.addEventListener("close", () => {
      if (!caughtUp) finish(new Error(`WebSocket ${url} closed before caught_up`));
      else finish();
    });
  });
}
