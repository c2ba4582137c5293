/**
 * @module routes/workflow-reads
 * Every read of one workflow, written once: one sub-app that src/index.ts mounts for each kind of
 * reader (./readers.ts), at the URLs links in the wild use:
 *   /s/:token           a share link's holder: every read below
 *   /w/:id              the signed-in owner: every read below, the page as the owner view
 *   /api/workflows/:id  a read token (or the owner's session): the three exports
 * Relative to the mount:
 *   GET /                          the page, one page of its timeline (`?after=<cursor>`; the owner's `?on=<id>`)
 *   GET /blocks                    the page's blocks rendered now: the live page swaps them in (one renderer for both)
 *   GET /files/:taskId             every file of one task, FILES_PAGE at a time (`?from=<row>`)
 *   GET /export.json               the workflow with its event log and hash chain, signed and streamed (`waymark verify`)
 *   GET /export.md                 the Markdown export
 *   GET /export.agent-trace.json   one Agent Trace record per task that committed work
 *   GET /ws                        the live feed (WebSocket)
 * A route checks its input's form first (nothing read, nothing charged), then the one reader
 * middleware (`readerOf`) resolves the reader, authorises the route's action against the access
 * matrix, charges the budgets and reads the head; the handler renders what that reader may read.
 */
import { Hono } from "hono";
import { validator } from "hono/validator";
import type { WorkflowHead } from "../domain/view";
import { clientOf } from "../http/bearer-tokens";
import { dataHeaders, noStore, pageHeaders } from "../http/security-headers";
import { agentTraceExport } from "../pages/export-agent-trace";
import { exportSigning, jsonExport } from "../pages/export-json";
import { markdownExport, signingNote } from "../pages/markdown";
import { ownerPage } from "../pages/owner-view";
import { workflowPage } from "../pages/page";
import { pageBlocks } from "../pages/page-reads";
import { textStream } from "../pages/text-stream";
import { currentKeyId } from "../signing";
import { CLIENT_HEADER } from "../workflow/workflow-object";
import { nonceOf, shareUrl } from "./forms";
import { answerFilesPage, answerPage, BAD_AFTER, BAD_FROM, filesFrom, pageQuery, timelineAfter } from "./page-answers";
import { type ReaderKind, type ReadsEnv, readerOf, type WorkflowRead, type WorkflowReader } from "./readers";

/** Every read, with what the reader middleware checks and charges for it. */
const READS = {
  page: { action: "workflow.read", budget: "page", head: true, form: "page" },
  blocks: { action: "workflow.read", budget: "page", head: true, form: "data" },
  files: { action: "workflow.read", budget: "page", head: true, form: "document" },
  json: { action: "workflow.read", budget: "export", head: true, form: "export" },
  markdown: { action: "workflow.read", budget: "export", head: true, form: "export" },
  trace: { action: "workflow.read", budget: "export", head: true, form: "export" },
  live: { action: "workflow.read", budget: null, head: false, form: "data" },
} as const satisfies Record<string, WorkflowRead>;

type ReadName = keyof typeof READS;

/** A mount of the workflow reads: the kind of reader it resolves, and the reads it offers. */
interface ReaderMount {
  kind: ReaderKind;
  reads: readonly ReadName[];
}

const EVERY_READ = Object.keys(READS) as ReadName[];

export const SHARE_LINK_READERS: ReaderMount = { kind: "share", reads: EVERY_READ };
export const OWNER_READERS: ReaderMount = { kind: "owner", reads: EVERY_READ };
/** Scripts read the exports; the pages and the live feed are the browser's, under /s/ and /w/. */
export const READ_TOKEN_READERS: ReaderMount = { kind: "token", reads: ["json", "markdown", "trace"] };

// ── Input, checked before the reader is resolved ────────────────────────────

const timelinePage = validator("query", (_query, c) => {
  const after = timelineAfter(c);
  return after === undefined ? c.text(BAD_AFTER, 400) : { after };
});

const filesPage = validator("query", (_query, c) => {
  const from = filesFrom(c);
  return from === undefined ? c.text(BAD_FROM, 400) : { from };
});

const webSocketUpgrade = validator("header", (headers, c) =>
  headers.upgrade?.toLowerCase() === "websocket" ? {} : c.text("expected a WebSocket upgrade", 426),
);

const liveFrom = validator("query", (query, c) => {
  const after = query.after ?? "0";
  return typeof after === "string" && /^\d{1,15}$/.test(after) ? { after } : c.text("after: must be a whole number ≥ 0", 400);
});

/** The reader and the head the middleware read for it (every read but the live socket has one). */
function headed(reader: WorkflowReader | undefined): { reader: WorkflowReader; head: WorkflowHead } {
  if (!reader?.head) throw new Error("a workflow read ran without the reader middleware's head");
  return { reader, head: reader.head };
}

const JSON_TYPE = { "Content-Type": "application/json; charset=utf-8" };

/** The workflow reads for the readers `mount` resolves: only the reads it offers exist under it. */
export function workflowReads(mount: ReaderMount): Hono<ReadsEnv> {
  const reads = new Hono<ReadsEnv>();
  const offers = (read: ReadName) => mount.reads.includes(read);
  const origin = (url: string) => new URL(url).origin;

  // The page (agent text's bidi controls shown as code points): the owner's is the owner view.
  if (offers("page"))
    reads.get("/", noStore, pageHeaders, timelinePage, readerOf(mount.kind, READS.page), async (c) => {
      const { reader, head } = headed(c.var.reader);
      const { after } = c.req.valid("query");
      const { base } = reader;
      if (reader.kind !== "owner" || !head.share) {
        return answerPage(c, async () => {
          const blocks = await pageBlocks(reader.stub, reader.as, head, { base, after, signingKey: await currentKeyId(c.env) });
          return workflowPage(head, blocks.markup, { nonce: nonceOf(c), base, query: pageQuery(after) });
        });
      }
      const owner = { ...head, share: head.share, feedback: head.feedback ?? [] };
      const on = c.req.query("on") ?? null;
      return answerPage(c, async () => {
        const signingKey = await currentKeyId(c.env);
        const [blocks, shared] = await Promise.all([
          pageBlocks(reader.stub, reader.as, owner, { base, after, reviewBase: base, selected: on, signingKey }),
          // Whether this session holds a credential that recorded the workflow's tasks (the agent's).
          c.var.principal ? reader.stub.recordedWith(c.var.account, c.var.principal.credential) : null,
        ]);
        return ownerPage(owner, blocks, {
          nonce: nonceOf(c),
          shareUrl: shareUrl(c, owner.share),
          on,
          query: pageQuery(after),
          sharesAgentCredential: shared?.ok === true && shared.value,
        });
      });
    });

  if (offers("blocks"))
    reads.get("/blocks", noStore, dataHeaders, timelinePage, readerOf(mount.kind, READS.blocks), async (c) => {
      const { reader, head } = headed(c.var.reader);
      const { after } = c.req.valid("query");
      const reviewBase = reader.kind === "owner" ? reader.base : undefined;
      return answerPage(
        c,
        async () =>
          (await pageBlocks(reader.stub, reader.as, head, { base: reader.base, after, reviewBase, signingKey: await currentKeyId(c.env) }))
            .markup,
        { "Waymark-Seq": String(head.last_seq) },
      );
    });

  // What its card on the page leaves out.
  if (offers("files"))
    reads.get("/files/:taskId", noStore, pageHeaders, filesPage, readerOf(mount.kind, READS.files), async (c) => {
      const { reader, head } = headed(c.var.reader);
      return answerFilesPage(c, reader.stub, reader.as, head, reader.base, c.req.valid("query").from);
    });

  if (offers("json"))
    reads.get("/export.json", noStore, dataHeaders, readerOf(mount.kind, READS.json), (c) => {
      const { reader, head } = headed(c.var.reader);
      return c.body(textStream(jsonExport(reader.stub, reader.as, head, exportSigning(c.env, origin(c.req.url)))), 200, JSON_TYPE);
    });

  if (offers("markdown"))
    reads.get("/export.md", noStore, dataHeaders, readerOf(mount.kind, READS.markdown), async (c) => {
      const { reader, head } = headed(c.var.reader);
      const body = markdownExport(reader.stub, reader.as, head, await signingNote(c.env, origin(c.req.url)));
      return c.body(textStream(body), 200, { "Content-Type": "text/markdown; charset=utf-8" });
    });

  /**
   * Each record links its task on the owner's page, never a share link: records end up in
   * repositories and reviews, and the link would give whoever reads them the workflow (the
   * Markdown export leaves it out for the same reason).
   */
  if (offers("trace"))
    reads.get("/export.agent-trace.json", noStore, dataHeaders, readerOf(mount.kind, READS.trace), (c) => {
      const { reader, head } = headed(c.var.reader);
      const page = `${origin(c.req.url)}/w/${head.workflow.id}`;
      return c.body(textStream(agentTraceExport(reader.stub, reader.as, head, page)), 200, JSON_TYPE);
    });

  /**
   * The live feed. Routing is on the decoded path, so `/s/<token>/%77s` lands here too and gets the
   * same checks. The object is never shown the browser's URL: it gets the verified reader in headers
   * and a fixed internal URL, and checks them itself before accepting (src/workflow/live-feed.ts).
   */
  if (offers("live"))
    reads.get("/ws", noStore, webSocketUpgrade, liveFrom, readerOf(mount.kind, READS.live), (c) => {
      const reader = c.var.reader;
      if (!reader) throw new Error("the live feed ran without the reader middleware");
      const live = new Request(`https://workflow.internal/live?after=${c.req.valid("query").after}`, {
        headers: {
          Upgrade: "websocket",
          ...reader.live,
          // Live pages are capped per client, counted as the login limiter counts them (an IPv6 /64 is one client).
          [CLIENT_HEADER]: clientOf(c.env, c.req.raw) ?? "local",
        },
      });
      return reader.stub.fetch(live);
    });

  return reads;
}
