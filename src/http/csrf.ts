/**
 * @module http/csrf
 * hono/csrf for the owner's forms. Browsers post forms from our no-referrer pages with
 * `Origin: null` and `Sec-Fetch-Site: same-origin`; both are accepted, a foreign origin is not.
 */
import { csrf } from "hono/csrf";
import { originAllowed } from "./origins";

export const formCsrf = csrf({ origin: (origin, c) => originAllowed(c.env, origin), secFetchSite: "same-origin" });
