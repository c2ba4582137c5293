/**
 * @module routes/plugin-marketplace
 * The plugin marketplace every endpoint serves, for Claude Code, Codex and Cursor: a read-only
 * git repository at /plugins/waymark.git (git's smart HTTP protocol, clone and fetch only)
 * holding the marketplace manifests and the Waymark plugin of @waymark/protocol/plugin, made for
 * this endpoint's origin and its own helper version. So
 *   claude plugin marketplace add <origin>/plugins/waymark.git && claude plugin install waymark@waymark
 *   codex plugin marketplace add <origin>/plugins/waymark.git && codex plugin add waymark@waymark
 * install a plugin whose MCP server and hooks run the helper this endpoint serves. Both agents
 * clone with git (Claude Code a shallow clone, which git's dumb protocol cannot serve).
 * The repository is built once per origin the host guard allowed, and kept in memory.
 */
import { MARKETPLACE_PATH, marketplaceFiles, PLUGIN_NAME } from "@waymark/protocol/plugin";
import { Hono } from "hono";
import helperPackage from "../../client-helper/package.json";
import type { AppEnv } from "../http/types";
import { LIMITS } from "../limits";
import { concat, FLUSH, type PackedRepository, packRepository, pktLine, readPktLines, sideBand } from "./git-pack";

const VERSION = helperPackage.version;
/** What this server does of git's protocol: the pack on side-band 64k, shallow clones (depth 1 is the whole history). */
const CAPABILITIES = `side-band-64k shallow no-progress symref=HEAD:refs/heads/main object-format=sha1 agent=waymark/${VERSION}`;

/** Repositories by origin: a handful at most (the host names this deployment answers to). */
const repositories = new Map<string, Promise<PackedRepository>>();

function repositoryFor(origin: string): Promise<PackedRepository> {
  let repository = repositories.get(origin);
  if (!repository) {
    if (repositories.size >= 16) repositories.clear();
    repository = packRepository(marketplaceFiles({ origin, mcp: `${origin}/mcp` }, VERSION), `Waymark plugin ${VERSION} for ${origin}`);
    repository.catch(() => repositories.delete(origin));
    repositories.set(origin, repository);
  }
  return repository;
}

function gitResponse(body: Uint8Array, kind: "advertisement" | "result"): Response {
  return new Response(body, {
    headers: { "Content-Type": `application/x-git-upload-pack-${kind}`, "Cache-Control": "no-cache", "X-Content-Type-Options": "nosniff" },
  });
}

const plain = (status: 400 | 403 | 415, text: string) =>
  new Response(`${text}\n`, { status, headers: { "Content-Type": "text/plain; charset=utf-8", "X-Content-Type-Options": "nosniff" } });

/** The request body, inflated when git sent it gzipped, refused beyond the bound. */
async function requestBody(request: Request): Promise<Uint8Array | null> {
  const raw = new Uint8Array(await request.arrayBuffer());
  if (request.headers.get("Content-Encoding") !== "gzip") return raw;
  const stream = new Blob([raw]).stream().pipeThrough(new DecompressionStream("gzip"));
  const reader = stream.getReader();
  const parts: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) return concat(parts);
    size += value.length;
    if (size > LIMITS.API_BODY_BYTES) {
      await reader.cancel();
      return null;
    }
    parts.push(value);
  }
}

export const pluginMarketplace = new Hono<AppEnv>();

pluginMarketplace.get(MARKETPLACE_PATH, (c) =>
  c.text(
    `Waymark's plugin marketplace (a git repository, waymark-helper ${VERSION}):\n` +
      `  claude plugin marketplace add ${new URL(c.req.url).origin}${MARKETPLACE_PATH}\n  claude plugin install ${PLUGIN_NAME}@${PLUGIN_NAME}\n` +
      `  codex plugin marketplace add ${new URL(c.req.url).origin}${MARKETPLACE_PATH}\n  codex plugin add ${PLUGIN_NAME}@${PLUGIN_NAME}\n`,
  ),
);

pluginMarketplace.get(`${MARKETPLACE_PATH}/info/refs`, async (c) => {
  if (c.req.query("service") !== "git-upload-pack") return plain(403, "service: only git-upload-pack (clone and fetch) is served");
  const { head } = await repositoryFor(new URL(c.req.url).origin);
  return gitResponse(
    concat([
      pktLine("# service=git-upload-pack\n"),
      FLUSH,
      pktLine(`${head} HEAD\0${CAPABILITIES}\n`),
      pktLine(`${head} refs/heads/main\n`),
      FLUSH,
    ]),
    "advertisement",
  );
});

pluginMarketplace.post(`${MARKETPLACE_PATH}/git-upload-pack`, async (c) => {
  if (c.req.header("Content-Type") !== "application/x-git-upload-pack-request") {
    return plain(415, "Content-Type: must be application/x-git-upload-pack-request");
  }
  const body = await requestBody(c.req.raw);
  const lines = body === null ? null : readPktLines(body);
  if (lines === null) return plain(400, "body: must be git pkt-lines within the size bound");
  const repository = await repositoryFor(new URL(c.req.url).origin);
  const wants = lines.filter((line): line is string => line?.startsWith("want ") === true);
  const unknown = wants.map((line) => line.split(" ")[1]).find((id) => id !== repository.head);
  if (unknown !== undefined) return gitResponse(pktLine(`ERR upload-pack: not our ref ${unknown}\n`), "result");
  const sideBand64k = wants[0]?.includes(" side-band-64k") === true;
  const parts: Uint8Array[] = [];
  // A shallow clone first gets the shallow commits: none, the one commit has no parent.
  if (lines.some((line) => line?.startsWith("deepen") === true)) parts.push(FLUSH);
  if (lines.includes("done")) {
    parts.push(pktLine("NAK\n"), ...(sideBand64k ? [sideBand(repository.pack), FLUSH] : [repository.pack]));
  } else if (lines.some((line) => line?.startsWith("have ") === true)) {
    // No object of the client's is ours but the commit itself: nothing in common to acknowledge.
    parts.push(pktLine("NAK\n"));
  }
  return gitResponse(concat(parts), "result");
});
