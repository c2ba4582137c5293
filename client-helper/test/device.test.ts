import { spawnSync } from "node:child_process";
import { chmodSync, existsSync, readFileSync, statSync } from "node:fs";
import { hostname } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { cleanupTempDirs, Repo, tempDir } from "./fixtures.js";
import { BIN, ensureBuilt, SYSTEM_NODE } from "./support.js";

/**
 * `waymark device` and the device key on disk, run as a user runs the built bin: the key is made
 * once, readable by its owner only, kept out of every repository, refused when others can read it;
 * pairing says what is missing. Pairing against a real endpoint and approving on the Devices page:
 * test/browser/provenance.test.ts.
 */
beforeAll(ensureBuilt);
afterAll(cleanupTempDirs);

function waymark(args: string[], env: Record<string, string>, cwd?: string) {
  const base: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) if (v !== undefined && !k.startsWith("WAYMARK_")) base[k] = v;
  const r = spawnSync(SYSTEM_NODE, [BIN, ...args], { cwd, encoding: "utf8", env: { ...base, ...env } });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

const fingerprintIn = (text: string) => /Fingerprint: (SHA256:\S{43})/.exec(text)?.[1];

describe("waymark device", () => {
  it("makes the key once, readable by its owner only, and shows the same fingerprint after", () => {
    const config = join(tempDir("waymark-device-"), "config");
    const first = waymark(["device", "--name", "ci box"], { XDG_CONFIG_HOME: config });
    expect(first.code, first.stderr).toBe(0);
    expect(first.stdout).toContain("Created a new device key.");
    expect(first.stdout).toContain("This device: ci box");
    const path = join(config, "waymark", "device-key.json");
    expect(statSync(path).mode & 0o777).toBe(0o600);
    expect(statSync(join(config, "waymark")).mode & 0o777).toBe(0o700);
    // The line that pins this key in a repository's allowed signers, for `waymark verify`.
    const publicKey = /Public key: {2}(\S+)/.exec(first.stdout)?.[1];
    expect(first.stdout).toContain(`add this line to .waymark/allowed-signers`);
    expect(first.stdout).toContain(`\n    ci-box waymark-ed25519 ${publicKey} ${fingerprintIn(first.stdout)}\n`);
    const again = waymark(["device"], { XDG_CONFIG_HOME: config });
    expect(again.stdout).not.toContain("Created");
    expect(fingerprintIn(again.stdout)).toBe(fingerprintIn(first.stdout));
    // The private half is printed nowhere.
    const secret = (JSON.parse(readFileSync(path, "utf8")) as { key: { d: string } }).key.d;
    expect(first.stdout + again.stdout).not.toContain(secret);

    // --new-key moves the old key aside: a new fingerprint.
    const renewed = waymark(["device", "--new-key"], { XDG_CONFIG_HOME: config });
    expect(renewed.stdout).toContain("The old key was moved to");
    expect(fingerprintIn(renewed.stdout)).not.toBe(fingerprintIn(first.stdout));
  });

  it("--name renames a key made earlier (init names it after the machine): shown, pinned and kept under the new name", () => {
    const config = join(tempDir("waymark-device-"), "config");
    const made = waymark(["device"], { XDG_CONFIG_HOME: config });
    expect(made.stdout).toContain(`This device: ${hostname()}`);
    const renamed = waymark(["device", "--name", "nu-laptop"], { XDG_CONFIG_HOME: config });
    expect(renamed.code, renamed.stderr).toBe(0);
    expect(renamed.stdout).toContain(`Renamed this device: ${hostname()} → nu-laptop\nThis device: nu-laptop\n`);
    expect(renamed.stdout).toMatch(/\n {4}nu-laptop waymark-ed25519 /);
    expect(fingerprintIn(renamed.stdout)).toBe(fingerprintIn(made.stdout));
    const path = join(config, "waymark", "device-key.json");
    expect(statSync(path).mode & 0o777).toBe(0o600);
    const again = waymark(["device"], { XDG_CONFIG_HOME: config });
    expect(again.stdout).toContain("This device: nu-laptop");
    expect(again.stdout).not.toContain("Renamed");
  });

  it("refuses a key file other users can read, saying how to fix it", () => {
    const config = join(tempDir("waymark-device-"), "config");
    expect(waymark(["device"], { XDG_CONFIG_HOME: config }).code).toBe(0);
    const path = join(config, "waymark", "device-key.json");
    chmodSync(path, 0o644);
    const refused = waymark(["device"], { XDG_CONFIG_HOME: config });
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain(`${path} can be read by other users (mode 644); run chmod 600 ${path}`);
  });

  it("init never puts a key inside the project: it says so, and that the figures stay claims", () => {
    const repo = Repo.init().write("README.md", "r\n").commitAll("initial");
    const home = tempDir("waymark-device-home-");
    const init = waymark(["init", "--url", "http://127.0.0.1:9", "--agent", "claude", "--dir", repo.dir], {
      HOME: home,
      XDG_CACHE_HOME: join(home, ".cache"),
      XDG_CONFIG_HOME: join(repo.dir, ".config"),
    });
    expect(init.code, init.stderr).toBe(0);
    expect(init.stdout).toMatch(/No device key: \S+\/\.config\/waymark\/device-key\.json is inside the project .*"claimed by the client"/);
    expect(existsSync(join(repo.dir, ".config", "waymark", "device-key.json"))).toBe(false);
  });

  it.each([
    [["device", "frob"], 2, /unknown argument "frob"/],
    [["device", "pair"], 1, /WAYMARK_TOKEN is not set/],
  ])("%j → exit %i, naming what is wrong", (args, code, message) => {
    const config = join(tempDir("waymark-device-"), "config");
    const run = waymark(args, { XDG_CONFIG_HOME: config, WAYMARK_URL: "http://127.0.0.1:9" });
    expect(run.code).toBe(code);
    expect(run.stderr).toMatch(message);
  });
});
