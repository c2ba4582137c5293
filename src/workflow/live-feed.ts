/**
 * @module workflow/live-feed
 * Who may open a workflow's live feed. The Durable Object never decides access from a URL: the
 * Worker verifies a share token or a dashboard session and passes it in a header, and this
 * module checks it again now — a share token against the stored link (revoked, rotated and
 * expired links are refused), an owner's session by asking the account's object whether it is
 * still open, an MCP subscription's account against the workflow's owner. Anything else is refused; admitted followers are capped and start where they left.
 */
import type { AccountObject } from "../account/account-object";
import type { EventLog } from "./event-log";
import type { LiveFollowers } from "./followers";
import type { Ownership } from "./ownership";
import type { ShareLinks } from "./share";

/** The header a Worker route sets after verifying a share token; the object checks it again. */
export const SHARE_TOKEN_HEADER = "Waymark-Share-Token";
/**
 * The owner's live page: the Worker sets the account and the dashboard session it verified; the
 * object checks that this account owns the workflow and asks the account's object whether the
 * session is still open, so neither a URL nor a lone header opens the feed.
 */
export const OWNER_ACCOUNT_HEADER = "Waymark-Owner-Account";
export const OWNER_SESSION_HEADER = "Waymark-Owner-Session";
/** The client a live follower is counted against (the Worker's `clientOf` of the request; an MCP subscription's credential). */
export const CLIENT_HEADER = "Waymark-Client";
/**
 * An MCP subscription (src/mcp/subscriptions.ts): the Worker sets the account whose credential it
 * verified (and keeps re-verifying while the stream lasts); the object checks that this account
 * owns the workflow. Like the owner's page, it stays open whatever happens to the share link.
 */
export const MCP_ACCOUNT_HEADER = "Waymark-Mcp-Account";

export class LiveFeed {
  constructor(
    private readonly followers: LiveFollowers,
    private readonly shareLinks: ShareLinks,
    private readonly log: EventLog,
    private readonly ownership: Ownership,
    private readonly accountStub: (account: string) => DurableObjectStub<AccountObject>,
  ) {}

  async open(request: Request): Promise<Response> {
    if (request.headers.get("Upgrade") !== "websocket") return new Response("expected a WebSocket upgrade", { status: 426 });
    const owner = request.headers.get(OWNER_ACCOUNT_HEADER);
    const session = request.headers.get(OWNER_SESSION_HEADER);
    const token = request.headers.get(SHARE_TOKEN_HEADER);
    const subscriber = request.headers.get(MCP_ACCOUNT_HEADER);
    if (subscriber !== null) {
      if (!this.ownership.of(subscriber)) return new Response("forbidden", { status: 403 });
    } else if (owner !== null) {
      if (!(await this.ownerSessionOpen(owner, session))) return new Response("forbidden", { status: 403 });
    } else {
      if (!token) return new Response("forbidden", { status: 403 });
      const status = await this.shareLinks.check(token);
      if (status !== "active")
        return new Response("This workflow is no longer shared.", { status: status === "not_found" || status === "none" ? 404 : 410 });
    }
    const client = request.headers.get(CLIENT_HEADER) ?? "unknown";
    const refusal = this.followers.refusal(client, owner !== null || subscriber !== null);
    if (refusal) return new Response(`Too many live pages: ${refusal}.`, { status: 429, headers: { "Retry-After": "60" } });
    const after = Number(new URL(request.url).searchParams.get("after") ?? "0");
    const pair = new WebSocketPair();
    const from = Number.isInteger(after) && after >= 0 ? Math.min(after, this.log.lastSeq()) : 0;
    // The owner's pages and MCP subscriptions outlive the share link; a link's readers do not.
    this.followers.accept(pair[1], client, from, owner !== null ? session : null, owner !== null || subscriber !== null);
    return new Response(null, { status: 101, webSocket: pair[0] });
  }

  /**
   * Whether `account` owns this workflow and `session` is one of its open dashboard sessions whose
   * credential still holds and may read; the account's object also notes that the session follows
   * this workflow, so that the socket closes when the session ends (sign-out, expiry, or its
   * credential revoked).
   */
  private async ownerSessionOpen(account: string, session: string | null): Promise<boolean> {
    const workflow = this.ownership.of(account);
    if (!workflow || !session) return false;
    return this.accountStub(account).followAsOwner(account, session, workflow.id);
  }
}
