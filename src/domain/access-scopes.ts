/**
 * @module domain/access-scopes
 * What a credential may do. Three scopes: `read` (get_workflow, MCP resources, exports,
 * search, the dashboard's lists), `write` (the agent tools that record work, share-link
 * changes) and `admin` (tokens, OAuth grants, webhooks, account settings). `write` implies
 * `read`: an agent that records work must be able to resume it with get_workflow. `admin`
 * implies nothing else, so an automation token for webhooks cannot read workflows.
 * Bootstrap tokens (WAYMARK_TOKENS, the dev token) hold all three.
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

export function missingScopeMessage(needed: Scope): string {
  return `this credential lacks the ${needed} scope${needed === "read" ? " (read or write)" : ""}`;
}
