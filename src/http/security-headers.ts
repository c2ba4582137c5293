/**
 * @module http/security-headers
 * Response headers of pages and exports, with hono/secure-headers. Share tokens live in
 * page URLs, so the Referrer-Policy keeps them out of Referer headers; the CSP allows only
 * this response's nonce'd script and style, and fetches/WebSockets back to this origin.
 * Nothing is cached by shared caches.
 */
import type { MiddlewareHandler } from "hono";
import { NONCE, secureHeaders } from "hono/secure-headers";

const common = {
  referrerPolicy: "no-referrer",
  xFrameOptions: "DENY",
  crossOriginResourcePolicy: "same-origin",
  crossOriginOpenerPolicy: "same-origin",
} as const;

/** HTML pages: a fresh nonce per response (`c.get("secureHeadersNonce")`) for the one script and stylesheet. */
export const pageHeaders = secureHeaders({
  ...common,
  contentSecurityPolicy: {
    defaultSrc: ["'none'"],
    scriptSrc: [NONCE],
    styleSrc: [NONCE],
    connectSrc: ["'self'"],
    imgSrc: ["'self'", "data:"],
    baseUri: ["'none'"],
    formAction: ["'self'"],
    frameAncestors: ["'none'"],
  },
});

/** Exports and JSON: never rendered as a document that could run anything. */
export const dataHeaders = secureHeaders({
  ...common,
  contentSecurityPolicy: { defaultSrc: ["'none'"], baseUri: ["'none'"], formAction: ["'none'"], frameAncestors: ["'none'"] },
});

export const noStore: MiddlewareHandler = async (c, next) => {
  await next();
  c.header("Cache-Control", "no-store");
};
