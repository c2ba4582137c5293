/**
 * Response headers of every page and export. Share tokens live in page URLs, so the
 * Referrer-Policy keeps them out of Referer headers; the CSP allows only this response's
 * nonce'd script and style, and WebSockets/fetches back to this origin.
 */
export function newNonce(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(18));
  return btoa(String.fromCharCode(...bytes));
}

export function contentSecurityPolicy(nonce: string): string {
  return [
    "default-src 'none'",
    `script-src 'nonce-${nonce}'`,
    `style-src 'nonce-${nonce}'`,
    "connect-src 'self'",
    "img-src 'self' data:",
    "base-uri 'none'",
    "form-action 'self'",
    "frame-ancestors 'none'",
  ].join("; ");
}

/** Headers for any response under /s/, /dashboard, /login and /api: nothing is cached by shared caches or sniffed. */
export function securityHeaders(nonce: string | null): Record<string, string> {
  return {
    "Content-Security-Policy": nonce
      ? contentSecurityPolicy(nonce)
      : "default-src 'none'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "X-Frame-Options": "DENY",
    "Cache-Control": "no-store",
    "Cross-Origin-Opener-Policy": "same-origin",
    "Cross-Origin-Resource-Policy": "same-origin",
  };
}

/** Whether a browser form POST comes from this origin (CSRF): Origin must match, or Sec-Fetch-Site say same-origin. */
export function sameOrigin(request: Request): boolean {
  const own = new URL(request.url).origin;
  const origin = request.headers.get("Origin");
  if (origin !== null) return origin === own;
  const site = request.headers.get("Sec-Fetch-Site");
  if (site !== null) return site === "same-origin";
  // Neither header: not a browser request made by a page (curl, scripts); cookies are SameSite=Strict anyway.
  return true;
}
