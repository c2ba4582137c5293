import { cloudflareTest } from "@cloudflare/vitest-plugin";
import { defineConfig, type TestProjectInlineConfiguration } from "vitest/config";

// The projects (docs/development.md says which file goes where):
//   workerd       code that runs on Cloudflare, inside workerd: one runtime per test worker,
//                 reused from file to file, storage emptied before each (test/support/workerd-setup.ts);
//   helper        the local helper in Node, no server;
//   e2e           end to end (wrangler dev + real clients) and Chromium: one shared `wrangler dev`
//                 (test/support/shared-server.ts), an account of its own per file;
//   alone,        what must not share the machine's two cores: fault injection, load, the fuzzer
//   workerd-alone and what holds a time. They run after the others, one file at a time.
// The first three run side by side, sharing PARALLEL test workers (PARALLEL files at a time in all).
const PARALLEL = 3;

/**
 * Files that kill or freeze their server, fill it with load, or hold it to a time: the fault
 * injection, the load, the fuzzer (1,000 requests within 50 s), the live page's latency, the
 * hooks of an agent session (a hook gives up after 800 ms by design), and the newcomer's README
 * walk (a fresh clone installed, built and served on its own port, with Chromium, for minutes).
 */
const ALONE = [
  "test/e2e/newcomer.test.ts",
  "test/e2e/faults.test.ts",
  "test/e2e/load.test.ts",
  "test/e2e/fuzz.test.ts",
  "test/e2e/workflow-quota.test.ts",
  "test/browser/live.test.ts",
  "client-helper/test/agent-session.test.ts",
];
/** The same inside workerd: a 500-task page within a second. */
const WORKERD_ALONE = ["test/pages/pages.test.ts"];

const alone = { maxWorkers: 1, sequence: { groupOrder: 1 } };
const parallel = { maxWorkers: PARALLEL };
/**
 * Node files run the helper, git, Chromium and servers: generous hang detectors; each file has a
 * user config directory of its own (test/support/isolated-config.ts).
 */
const node = { testTimeout: 60_000, hookTimeout: 120_000, setupFiles: ["./test/support/isolated-config.ts"] };

function workerd(name: string, include: string[], exclude: string[], run: typeof alone | typeof parallel): TestProjectInlineConfiguration {
  return {
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
              {
                kty: "OKP",
                crv: "Ed25519",
                x: "qsKmHr2oV5lGUShNSpQrdEYkTEkwMh6L5vSJkXR20Pw",
                d: "YEy1V7iX49sPCTw90rTTxwnY0_QBKZx_V65ytBRRaSY",
              },
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
      name,
      include,
      exclude,
      isolate: false,
      setupFiles: ["./test/support/workerd-setup.ts"],
      // A hang detector, not a speed claim (those are assertions): some files build thousands of
      // entries, and files share the cores.
      testTimeout: 30_000,
      ...run,
    },
  };
}

export default defineConfig({
  test: {
    reporters: ["default", "./test/support/summary-reporter.ts"],
    globalSetup: ["./test/support/worker-build-setup.ts"],
    projects: [
      workerd("workerd", ["test/{domain,mcp,workflow,worker,pages,account}/**/*.test.ts"], WORKERD_ALONE, parallel),
      { test: { name: "helper", include: ["client-helper/test/**/*.test.ts"], exclude: ALONE, ...node, ...parallel } },
      {
        test: {
          name: "e2e",
          include: ["test/{e2e,browser}/**/*.test.ts"],
          exclude: ALONE,
          globalSetup: ["./test/support/shared-server.ts"],
          ...node,
          ...parallel,
        },
      },
      { test: { name: "alone", include: ALONE, ...node, ...alone } },
      workerd("workerd-alone", WORKERD_ALONE, [], alone),
    ],
  },
});
