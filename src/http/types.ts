/**
 * @module http/types
 * The Hono environment of every route: the Worker's bindings, and what the middleware
 * chain hands to handlers (the authenticated account, the dashboard session and, for pages,
 * the CSP nonce).
 */
import type { Principal } from "./bearer-tokens";

/** A signed-in owner (src/http/session.ts opens and checks them): the credential's principal, and the session's id. */
export interface Session extends Principal {
  id: string;
}

export interface AppEnv {
  Bindings: Env;
  Variables: {
    /** Set by requireAccount: who the caller acts for, what it may do, and the credential it came from. */
    principal: Principal;
    /** Set by requireAccount: the principal's account. */
    account: string;
    /** Set by requireAccount when a dashboard session (rather than a bearer token) authenticated the call. */
    session: Session | null;
    /** Set on /mcp once the body is read and parsed (src/mcp/endpoint.ts). */
    rpc?: { body: Uint8Array; parsed: unknown };
    /** Set by hono/secure-headers when a page's CSP uses a nonce. */
    secureHeadersNonce?: string;
  };
}
