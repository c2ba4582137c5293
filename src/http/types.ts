/**
 * @module http/types
 * The Hono environment of every route: the Worker's bindings, and what the middleware
 * chain hands to handlers (the authenticated account, the dashboard session and, for pages,
 * the CSP nonce).
 */
import type { Scope } from "../domain/access-scopes";

/** A dashboard session (src/http/session.ts opens and checks them). */
export interface Session {
  account: string;
  id: string;
  /** The scopes of the token the session was opened with. */
  scopes: readonly Scope[];
}

export interface AppEnv {
  Bindings: Env;
  Variables: {
    /** Set by requireAccount: the caller's account. */
    account: string;
    /** Set by requireAccount: what the caller's credential may do. */
    scopes: readonly Scope[];
    /** Set by requireAccount when a dashboard session (rather than a bearer token) authenticated the call. */
    session: Session | null;
    /** Set by hono/secure-headers when a page's CSP uses a nonce. */
    secureHeadersNonce?: string;
  };
}
