/**
 * @module workflow/followers
 * Live followers of a workflow page: hibernatable WebSockets that receive every event once.
 *
 * Access is decided by the caller (the object checks the share token the Worker verified);
 * this module bounds what a follower can cost:
 * - catch-up is paged: one page (≤ LIMITS.EVENTS_PAGE events, ≤ LIMITS.LIVE_PAGE_BYTES) is
 *   sent, then `{"type":"more","seq":n}`; the follower pulls the next page with `{"after": n}`,
 *   so at most one page per socket is in flight;
 * - each socket remembers the last seq it was sent (in its attachment, which survives
 *   hibernation): an `after` below it is ignored, so nothing is ever sent twice to one socket;
 * - sockets are capped per client, and per workflow in two pools: the owner's (dashboard pages and
 *   MCP subscriptions of the account's credentials) and a share link's readers, so readers never
 *   lock the owner out.
 *
 * Messages sent: {"type":"event","event":…}, {"type":"more","seq":n}, {"type":"caught_up","seq":n}.
 */
import type { WorkflowEvent } from "../domain/view";
import { LIMITS } from "../limits";
import type { EventLog } from "./event-log";

interface FollowerState {
  /** The last seq this socket was sent (or asked to start after). */
  sent: number;
  /** Whether the socket has been sent everything up to the log's head and gets live events. */
  live: boolean;
}

const CLIENT_TAG = (client: string) => `client:${client}`;
/** Sockets the owner's session let in: kept open whatever happens to the share link, closed at sign-out. */
const OWNER_TAG = "audience:owner";
const SESSION_TAG = (session: string) => `session:${session}`;

export class LiveFollowers {
  constructor(
    private readonly ctx: DurableObjectState,
    private readonly log: EventLog,
  ) {}

  /** Why a new follower from `client` (the owner's, or a link reader) is refused (a 429 message), or null. */
  refusal(client: string, owner: boolean): string | null {
    const owners = this.ctx.getWebSockets(OWNER_TAG).length;
    if (owner && owners >= LIMITS.LIVE_OWNER_SOCKETS_PER_WORKFLOW) {
      return `at most ${LIMITS.LIVE_OWNER_SOCKETS_PER_WORKFLOW} of the owner's live pages and subscriptions per workflow`;
    }
    if (!owner && this.ctx.getWebSockets().length - owners >= LIMITS.LIVE_SOCKETS_PER_WORKFLOW) {
      return `at most ${LIMITS.LIVE_SOCKETS_PER_WORKFLOW} live pages per workflow`;
    }
    if (this.ctx.getWebSockets(CLIENT_TAG(client)).length >= LIMITS.LIVE_SOCKETS_PER_CLIENT) {
      return `at most ${LIMITS.LIVE_SOCKETS_PER_CLIENT} live pages per client`;
    }
    return null;
  }

  /**
   * Accepts a follower that has seen events up to `after`, and sends it the first page. The
   * owner's sockets (a dashboard session's, or an MCP subscription's: `owner`) outlive the share link.
   */
  accept(socket: WebSocket, client: string, after: number, ownerSession: string | null, owner: boolean): void {
    const tags = [CLIENT_TAG(client), ...(owner ? [OWNER_TAG] : []), ...(ownerSession === null ? [] : [SESSION_TAG(ownerSession)])];
    this.ctx.acceptWebSocket(socket, tags);
    this.sendPage(socket, { sent: after, live: false });
  }

  /** `{"after": n}`: the next page. An `after` below what the socket was sent changes nothing. */
  onMessage(socket: WebSocket, message: string | ArrayBuffer): void {
    if (typeof message !== "string" || message.length > 100) return;
    let after: number;
    try {
      after = Number((JSON.parse(message) as { after?: unknown }).after);
    } catch {
      socket.send(JSON.stringify({ type: "error", message: 'expected {"after": <seq>}' }));
      return;
    }
    const state = this.state(socket);
    // The socket can only have seen what it was sent: the next page always starts there.
    if (!Number.isInteger(after) || after < state.sent || state.live) return;
    this.sendPage(socket, state);
  }

  /** New events go to sockets that are live; the others reach them through their next page. */
  broadcast(events: readonly WorkflowEvent[]): void {
    if (events.length === 0) return;
    const first = events[0]?.seq ?? 0;
    for (const socket of this.ctx.getWebSockets()) {
      const state = this.state(socket);
      if (!state.live) continue;
      try {
        if (state.sent !== first - 1) {
          this.sendPage(socket, state);
          continue;
        }
        for (const event of events) socket.send(JSON.stringify({ type: "event", event }));
        this.save(socket, { sent: events.at(-1)?.seq ?? state.sent, live: true });
      } catch {
        // A socket that is closing catches up when its page reconnects.
      }
    }
  }

  /** Closes the sockets one owner session let in (sign-out). */
  closeSession(session: string, code: number, reason: string): void {
    for (const socket of this.ctx.getWebSockets(SESSION_TAG(session))) {
      try {
        socket.close(code, reason);
      } catch {
        // Already closing.
      }
    }
  }

  /** Closes the sockets a share link let in; the owner's pages stay open whatever happens to the link. */
  closeAll(code: number, reason: string): void {
    for (const socket of this.ctx.getWebSockets()) {
      if (this.ctx.getTags(socket).includes(OWNER_TAG)) continue;
      try {
        socket.close(code, reason);
      } catch {
        // Already closing.
      }
    }
  }

  private sendPage(socket: WebSocket, state: FollowerState): void {
    const page = this.log.after(state.sent, LIMITS.EVENTS_PAGE, LIMITS.LIVE_PAGE_BYTES);
    for (const event of page.events) socket.send(JSON.stringify({ type: "event", event }));
    const sent = page.next_seq;
    if (page.has_more) {
      socket.send(JSON.stringify({ type: "more", seq: sent }));
      this.save(socket, { sent, live: false });
    } else {
      socket.send(JSON.stringify({ type: "caught_up", seq: sent }));
      this.save(socket, { sent, live: true });
    }
  }

  private state(socket: WebSocket): FollowerState {
    const attached = socket.deserializeAttachment() as FollowerState | null;
    return attached ?? { sent: 0, live: false };
  }

  private save(socket: WebSocket, state: FollowerState): void {
    socket.serializeAttachment(state);
  }
}
