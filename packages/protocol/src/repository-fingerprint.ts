/**
 * @module repository-fingerprint
 * Repository identity, defined once for the helper (which computes it) and the edge (which
 * compares it): a remote URL normalised so every spelling of one repository reads the same,
 * and a fingerprint over that URL and the repository's root commit. Two clones of one
 * repository share a fingerprint; two repositories that merely share a name do not.
 * docs/attribution.md ("Repository identity") describes the rule; the wire schema of what
 * the helper sends is `repositorySchema` in ./wire.
 */
/** Bounds of what the helper sends (a remote is display text, never a reason to refuse a call). */
export const REPOSITORY_LIMITS = { REMOTE_CHARS: 500, BRANCH_CHARS: 1000 } as const;

const SCP_LIKE = /^(?:[^@/\s]+@)?([^:/\s]+):(?!\/)(.+)$/;
const DEFAULT_PORTS: Record<string, string> = { "ssh:": "22", "https:": "443", "http:": "80", "git:": "9418" };

/**
 * `host/path` in lower-case host, without scheme, user, password, default port, trailing
 * slashes or `.git`: `git@GitHub.com:acme/app.git`, `https://tok@github.com/acme/app/` and
 * `ssh://git@github.com:22/acme/app` all read `github.com/acme/app`. A local path (a remote
 * that is another directory) is kept as it is, without trailing slashes. Credentials never
 * survive: the result is safe to show.
 */
export function normalizeRemoteUrl(remote: string): string {
  const trimmed = remote.trim();
  const strip = (path: string) =>
    path
      .replace(/\/+$/, "")
      .replace(/\.git$/i, "")
      .replace(/\/+$/, "");
  if (URL.canParse(trimmed) && /^[a-z][a-z0-9+.-]*:\/\//i.test(trimmed)) {
    const url = new URL(trimmed);
    if (url.protocol === "file:") return strip(decodeURIComponent(url.pathname));
    const port = url.port && url.port !== DEFAULT_PORTS[url.protocol] ? `:${url.port}` : "";
    return `${url.hostname.toLowerCase()}${port}/${strip(url.pathname.replace(/^\/+/, ""))}`;
  }
  const scp = SCP_LIKE.exec(trimmed);
  // `C:\repo` is a Windows path, not host "C".
  if (scp?.[1] && scp[2] && !/^[A-Za-z]$/.test(scp[1])) return `${scp[1].toLowerCase()}/${strip(scp[2].replace(/^\/+/, ""))}`;
  return strip(trimmed);
}

/**
 * sha-256 (lower-case hex) of `waymark-repository-v1\n<normalised remote>\n<root commit>`;
 * either part is empty when unknown (no remote, no commit yet). Uses WebCrypto, present in
 * Node >= 20 and in Workers.
 */
export async function repositoryFingerprint(remote: string | null, rootCommit: string | null): Promise<string> {
  const text = `waymark-repository-v1\n${remote === null ? "" : normalizeRemoteUrl(remote)}\n${rootCommit ?? ""}`;
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(text));
  return [...new Uint8Array(digest)].map((byte) => byte.toString(16).padStart(2, "0")).join("");
}
