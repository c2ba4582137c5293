import { cloudflareTest } from "@cloudflare/vitest-plugin";
import { defineConfig } from "vitest/config";

// Two projects: code that runs on Cloudflare is tested inside workerd; the local
// helper, the end-to-end chain (wrangler dev + real clients) and the browser tests
// run in Node.
export default defineConfig({
  test: {
    reporters: ["default", "./test/support/summary-reporter.ts"],
    globalSetup: ["./test/support/worker-build-setup.ts"],
    projects: [
      {
        plugins: [
          cloudflareTest({
            wrangler: { configPath: "./wrangler.toml" },
            miniflare: {
              bindings: {
                WAYMARK_TOKENS: "acme:token-acme-0123456789,globex:token-globex-0123456789",
                WAYMARK_DEV_TOKEN: "",
                WAYMARK_SHARE_SECRET: "test-share-secret-of-at-least-32-bytes",
                // A current key and a retired one (public part only), as after a rotation.
                WAYMARK_SIGNING_KEYS: JSON.stringify([
                  { kty: "OKP", crv: "Ed25519", x: "qsKmHr2oV5lGUShNSpQrdEYkTEkwMh6L5vSJkXR20Pw", d: "YEy1V7iX49sPCTw90rTTxwnY0_QBKZx_V65ytBRRaSY" },
                  { kty: "OKP", crv: "Ed25519", x: "jB2-8Qa2hrSIVBnTr-JAY1EYtBOSeYCxr_DTFGZVTIA" },
                ]),
                // Production mode (no dev token): the hosts and origin the tests call.
                WAYMARK_HOSTNAMES: "localhost,waymark.example",
                WAYMARK_ALLOWED_ORIGINS: "http://localhost",
              },
            },
          }),
        ],
        test: {
          name: "workerd",
          include: ["test/{domain,mcp,workflow,worker,pages,account}/**/*.test.ts"],
        },
      },
      {
        test: {
          name: "node",
          include: ["test/{e2e,browser}/**/*.test.ts", "client-helper/test/**/*.test.ts"],
          setupFiles: ["./test/support/isolated-config.ts"],
          testTimeout: 60_000,
          hookTimeout: 120_000,
          fileParallelism: false,
        },
      },
    ],
  },
});
