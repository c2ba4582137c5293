/**
 * @module http/types
 * The Hono environment of every route: the Worker's bindings, and what the middleware
 * chain hands to handlers (the authenticated account and, for pages, the CSP nonce).
 */

import type { Scope } from "../domain/access-scopes";
import type { Session } from "./session";

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
