import { env } from "cloudflare:workers";
import { expect, it } from "vitest";
it("runs in workerd", () => { expect(env.WAYMARK_TOKENS).toContain("acme"); });
