/** The repository identity rule shared by helper and edge (@waymark/protocol/repository). */
import { normalizeRemoteUrl, repositoryFingerprint } from "@waymark/protocol/repository-fingerprint";
import { describe, expect, it } from "vitest";

describe("normalizeRemoteUrl", () => {
  it.each([
    ["git@github.com:acme/app.git", "github.com/acme/app"],
    ["git@GitHub.com:acme/app", "github.com/acme/app"],
    ["https://github.com/acme/app.git", "github.com/acme/app"],
    ["https://ci-token:x-oauth@GitHub.COM/acme/app.git/", "github.com/acme/app"],
    ["ssh://git@github.com:22/acme/app.git", "github.com/acme/app"],
    ["ssh://git@gitlab.example:2222/group/sub/app.git", "gitlab.example:2222/group/sub/app"],
    ["http://gitea.local:80/acme/app", "gitea.local/acme/app"],
    ["git://example.org/app.git", "example.org/app"],
    ["  https://github.com/acme/app  ", "github.com/acme/app"],
    ["/srv/git/app.git", "/srv/git/app"],
    ["file:///srv/git/app.git/", "/srv/git/app"],
    ["../upstream/", "../upstream"],
    ["C:\\repos\\app", "C:\\repos\\app"],
  ])("%s → %s", (remote, normalised) => {
    expect(normalizeRemoteUrl(remote)).toBe(normalised);
  });
});

describe("repositoryFingerprint", () => {
  const root = "a".repeat(40);
  it("is the same for every spelling of one remote with the same root commit", async () => {
    const ssh = await repositoryFingerprint("git@github.com:acme/app.git", root);
    expect(ssh).toMatch(/^[0-9a-f]{64}$/);
    expect(await repositoryFingerprint("https://token@github.com/acme/app", root)).toBe(ssh);
  });
  it.each([
    ["another remote", "git@github.com:acme/other.git", root],
    ["another root commit (a different repository under the same URL)", "git@github.com:acme/app.git", "b".repeat(40)],
    ["no remote", null, root],
    ["no commit yet", "git@github.com:acme/app.git", null],
  ])("differs for %s", async (_label, remote, rootCommit) => {
    expect(await repositoryFingerprint(remote, rootCommit)).not.toBe(await repositoryFingerprint("git@github.com:acme/app.git", root));
  });
  it("is sha-256 of the documented text", async () => {
    const text = new TextEncoder().encode(`waymark-repository-v1\ngithub.com/acme/app\n${root}`);
    const digest = [...new Uint8Array(await crypto.subtle.digest("SHA-256", text))].map((b) => b.toString(16).padStart(2, "0")).join("");
    expect(await repositoryFingerprint("https://github.com/acme/app", root)).toBe(digest);
  });
});
