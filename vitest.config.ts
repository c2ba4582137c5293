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
          testTimeout: 60_000,
          hookTimeout: 120_000,
          fileParallelism: false,
        },
      },
    ],
  },
});
