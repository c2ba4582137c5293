/**
 * @module domain/access-scopes
 * What a credential may do: the access policy, pure and table-tested (test/worker/scope-rules.test.ts).
 *
 * Three scopes. `read`: get_workflow, MCP resources, exports, search, the dashboard's lists and a
 * share link's state. `write`: the agent tools that record work, share-link changes, feedback,
 * and consuming reviewer feedback (an agent's call marks it delivered); `write` implies `read`,
 * so an agent can resume what it records. `admin`: tokens, OAuth grants, webhooks, settings;
 * it implies nothing else. Bootstrap tokens (WAYMARK_TOKENS, the dev token) hold all three.
 *
 * Every action needs every scope its row lists (ACTION_SCOPES): what `admin` may do without
 * `read` is exactly the rows that list `admin` alone. A webhook delivers workflow text, so
 * registering one needs `read` as well.
 *
 * A credential never creates a stronger one (`derivationProblem`): a token, grant or webhook it
 * creates holds at most the creator's own scopes and ends no later than the creator does.
 */
export const SCOPES = ["read", "write", "admin"] as const;
export type Scope = (typeof SCOPES)[number];

const IMPLIED: Record<Scope, readonly Scope[]> = { read: ["read"], write: ["write", "read"], admin: ["admin"] };

export function isScope(value: unknown): value is Scope {
  return typeof value === "string" && (SCOPES as readonly string[]).includes(value);
}

/** The scopes a set of granted scopes effectively holds (implications applied), in canonical order. */
export function effectiveScopes(granted: readonly Scope[]): Scope[] {
  const held = new Set(granted.flatMap((scope) => IMPLIED[scope]));
  return SCOPES.filter((scope) => held.has(scope));
}

export function allows(granted: readonly Scope[], needed: Scope): boolean {
  return granted.some((scope) => IMPLIED[scope].includes(needed));
}

/** Canonical, de-duplicated scopes as stored and shown: "read write". */
export function normalizeScopes(scopes: readonly Scope[]): Scope[] {
  return SCOPES.filter((scope) => scopes.includes(scope));
}

/** What `a` and `b` both hold (implications applied): a grant can do no more than the credential behind it. */
export function commonScopes(a: readonly Scope[], b: readonly Scope[]): Scope[] {
  const inB = new Set(effectiveScopes(b));
  return effectiveScopes(a).filter((scope) => inB.has(scope));
}

export function missingScopeMessage(needed: Scope): string {
  return `this credential lacks the ${needed} scope${needed === "read" ? " (read or write)" : ""}`;
}

/** Everything a credential can be asked to do, by any route, page or tool. */
export type Action =
  | "workflow.read"
  | "workflow.write"
  | "share.read"
  | "share.change"
  | "feedback.give"
  | "feedback.consume"
  | "token.create"
  | "token.manage"
  | "grant.approve"
  | "grant.manage"
  | "webhook.create"
  | "webhook.manage"
  | "settings.change"
  | "device.pair"
  | "device.manage"
  | "github.configure";

/** The access matrix: each action and every scope it needs. */
export const ACTION_SCOPES: Record<Action, readonly Scope[]> = {
  // get_workflow, resources, exports, search, the dashboard and owner view
  "workflow.read": ["read"],
  // start_workflow … complete_workflow
  "workflow.write": ["write"],
  // the link's state; never creates one
  "share.read": ["read"],
  // create (rotate), revoke, set the expiry
  "share.change": ["write"],
  "feedback.give": ["write"],
  // an agent's call marks reviewer feedback delivered: a reader's look must not hide it from the agent
  "feedback.consume": ["write"],
  // limited further by derivationProblem
  "token.create": ["admin"],
  // list and revoke managed tokens
  "token.manage": ["admin"],
  // the consent page; the granted scope must be held too (derivationProblem)
  "grant.approve": ["read"],
  // list and revoke connected apps
  "grant.manage": ["admin"],
  // a webhook delivers workflow text
  "webhook.create": ["admin", "read"],
  // list (URLs and delivery status) and delete
  "webhook.manage": ["admin"],
  // share_new_workflows
  "settings.change": ["admin"],
  // a helper asks to pair its device key (with the token it records with); nothing counts until approved
  "device.pair": ["write"],
  // approve (list, add) and revoke devices: an approved device's signatures make figures "computed and signed"
  "device.manage": ["admin"],
  // the account's GitHub receiver: it posts pull-request reviews as feedback for as long as its credential holds
  "github.configure": ["admin", "write"],
};

/**
 * What a share link holds: `read`, of its one workflow (the Worker checks its MAC, the workflow object
 * whether it is still active). The workflow reads check a link's reader against the matrix with it.
 */
export const SHARE_LINK_SCOPES: readonly Scope[] = ["read"];

export function may(held: readonly Scope[], action: Action): boolean {
  return ACTION_SCOPES[action].every((needed) => allows(held, needed));
}

/** The first scope `held` lacks for `action`, or null when it may. */
export function scopeMissing(held: readonly Scope[], action: Action): Scope | null {
  return ACTION_SCOPES[action].find((needed) => !allows(held, needed)) ?? null;
}

/** What a credential holds, or asks a new one to hold: scopes and when it stops (ms since the epoch; null: never). */
export interface Authority {
  scopes: readonly Scope[];
  expiresAt: number | null;
}

/**
 * Why a credential (`creator`) may not create one holding `requested`, as `field: rule`, or null:
 * every requested scope must be one the creator holds, and it must end no later than the creator.
 */
export function derivationProblem(creator: Authority, requested: Authority): string | null {
  const stronger = effectiveScopes(requested.scopes).filter((scope) => !allows(creator.scopes, scope));
  if (stronger.length > 0) {
    return `scopes: this credential cannot give ${stronger.join(", ")}; it holds only ${effectiveScopes(creator.scopes).join(", ") || "nothing"}`;
  }
  if (creator.expiresAt !== null && (requested.expiresAt === null || requested.expiresAt > creator.expiresAt)) {
    return `expires_in_seconds: must end by ${new Date(creator.expiresAt).toISOString()}, when the credential creating it expires`;
  }
  return null;
}
