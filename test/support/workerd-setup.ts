/**
 * @module test/support/workerd-setup
 * Runs before every file of the workerd project. The project reuses one workerd (and its module
 * cache) for file after file instead of starting one per file (`isolate: false` in
 * vitest.config.ts), so each file starts here from empty storage: no file sees another's Durable
 * Objects, alarms or KV entries, as when every file had a runtime of its own.
 */
import { reset } from "cloudflare:test";
import { beforeAll } from "vitest";

beforeAll(async () => {
  await reset();
});
