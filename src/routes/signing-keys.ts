/**
 * @module routes/signing-keys
 * The deployment's public signing keys, current and retired, at a well-known URL: what
 * `waymark verify --endpoint` fetches to check an export's signed statement. Public, as public
 * keys are; cacheable for a few minutes so a rotation reaches verifiers quickly.
 */
import { type PublishedKeys, SIGNING_KEYS_PATH } from "@waymark/protocol/statement";
import { Hono } from "hono";
import type { AppEnv } from "../http/types";
import { publishedKeys } from "../signing";

export const signingKeyRoutes = new Hono<AppEnv>().get(SIGNING_KEYS_PATH, async (c) => {
  c.header("Cache-Control", "public, max-age=300");
  const document: PublishedKeys = { keys: await publishedKeys(c.env) };
  return c.json(document);
});
