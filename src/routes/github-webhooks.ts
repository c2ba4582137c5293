/**
 * @module routes/github-webhooks
 * Pull-request reviews back to the agent (docs/pull-requests.md):
 *   PUT    /api/github/receiver   configures the account's GitHub receiver (replacing any) → its URL and
 *                                 secret, shown once, for the GitHub webhook's settings; bearer token (admin
 *                                 and write: its deliveries give feedback), it delivers while that token holds
 *   GET    /api/github/receiver   its URL, when it was made, its last delivery; bearer token (admin and write)
 *   DELETE /api/github/receiver   bearer token (admin and write)
 *   POST   /hooks/github/:account/:receiver   GitHub's deliveries (`pull_request_review`,
 *                                 `pull_request_review_comment`, `ping`), signed with X-Hub-Signature-256;
 *                                 mounted before the general body cap, bounded by GITHUB_WEBHOOK_BODY_BYTES
 * The delivery route addresses an account's object only for an account this deployment has (a
 * made-up one costs no storage); everything else (the receiver, its secret, the signature, the
 * delivery id) is checked by that object (account/github-receiver). Refusals look alike: an unknown
 * account or receiver answers as a bad signature does.
 */
import { Hono } from "hono";
import { bootstrapTable, isConfiguredAccount } from "../domain/credentials";
import { apiError, apiErrorResponse } from "../http/api-errors";
import { readBounded } from "../http/bounded-body";
import { requireAccount } from "../http/require-account";
import { dataHeaders, noStore } from "../http/security-headers";
import type { AppEnv } from "../http/types";
import { LIMITS } from "../limits";
import { accountStub } from "../stubs";

export const githubWebhookRoutes = new Hono<AppEnv>();
/** The receiver's management, mounted with the other account routes (after the general body cap). */
export const githubReceiverRoutes = new Hono<AppEnv>();

const ACCOUNT = /^[a-z0-9][a-z0-9_-]{0,63}$/;
const RECEIVER = /^ghr_[a-z2-7]{16}$/;
const REFUSED = "X-Hub-Signature-256: does not verify for this receiver";

githubWebhookRoutes.post("/hooks/github/:account/:receiver", noStore, dataHeaders, async (c) => {
  const account = c.req.param("account");
  const receiver = c.req.param("receiver");
  if (!ACCOUNT.test(account) || !RECEIVER.test(receiver) || !isConfiguredAccount(await bootstrapTable(c.env), account)) {
    // The body is left unread, not cancelled: a cancelled one closes the connection under a sender
    // still writing it, who then sees a reset instead of this answer.
    return apiError(c, "UNAUTHORIZED", REFUSED);
  }
  const body = await readBounded(c.req.raw, LIMITS.GITHUB_WEBHOOK_BODY_BYTES);
  if (body === null) return apiError(c, "PAYLOAD_TOO_LARGE", `body: must be at most ${LIMITS.GITHUB_WEBHOOK_BODY_BYTES} bytes`);
  const answer = await accountStub(c.env, account).receiveGithub(account, {
    receiver,
    event: c.req.header("X-GitHub-Event") ?? null,
    id: c.req.header("X-GitHub-Delivery") ?? null,
    signature: c.req.header("X-Hub-Signature-256") ?? null,
    body,
  });
  return c.json(answer.body, answer.status as 200);
});

const manager = requireAccount({ bearer: true, session: false, otherwise: "json", action: "github.configure" });
githubReceiverRoutes.use("/api/github/receiver", noStore, dataHeaders, manager);

const receiverUrl = (origin: string, account: string, id: string) => `${origin}/hooks/github/${account}/${id}`;

githubReceiverRoutes.put("/api/github/receiver", async (c) => {
  const { account, credential } = c.var.principal;
  const configured = await accountStub(c.env, account).configureGithub(account, credential);
  if (!configured) return apiErrorResponse("UNAUTHORIZED", "credential: no longer valid for configuring the GitHub receiver");
  const origin = new URL(c.req.url).origin;
  return c.json(
    {
      ...configured,
      url: receiverUrl(origin, account, configured.id),
      content_type: "application/json",
      events: ["pull_request_review", "pull_request_review_comment"],
    },
    201,
  );
});

githubReceiverRoutes.get("/api/github/receiver", async (c) => {
  const status = await accountStub(c.env, c.var.account).githubStatus();
  if (!status) return apiError(c, "NOT_FOUND", "receiver: this account has no GitHub receiver (PUT /api/github/receiver makes one)");
  return c.json({ ...status, url: receiverUrl(new URL(c.req.url).origin, c.var.account, status.id) });
});

githubReceiverRoutes.delete("/api/github/receiver", async (c) => {
  const removed = await accountStub(c.env, c.var.account).removeGithub();
  if (!removed) return apiError(c, "NOT_FOUND", "receiver: this account has no GitHub receiver");
  return c.json({ deleted: true });
});
