/**
 * @module routes/helper-download
 * The helper, from the endpoint itself: GET /helper/waymark-helper-<version>.tgz is the tarball
 * of this endpoint's own helper version (built by scripts/helper-tarball.mjs into
 * build/helper-tarball.bin, imported as bytes), and GET /helper/latest redirects to it, so
 * `npx -y --package=<endpoint>/helper/latest waymark …` always runs the matching helper. Any
 * other /helper/ path is 404.
 */
import { Hono } from "hono";
import tarball from "../../build/helper-tarball.bin";
import helperPackage from "../../client-helper/package.json";
import type { AppEnv } from "../http/types";

const HELPER_TARBALL = `${helperPackage.name}-${helperPackage.version}.tgz`;

export const helperDownload = new Hono<AppEnv>();

helperDownload.get(`/helper/${HELPER_TARBALL}`, (c) =>
  c.body(tarball, 200, {
    "Content-Type": "application/gzip",
    "Content-Length": String(tarball.byteLength),
    // The same URL serves new bytes after a rebuild of the same version: short-lived, then revalidated.
    "Cache-Control": "public, max-age=300",
    "X-Content-Type-Options": "nosniff",
  }),
);

helperDownload.get("/helper/latest", (c) => c.redirect(`/helper/${HELPER_TARBALL}`, 302));
