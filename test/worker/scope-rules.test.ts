import { describe, expect, it } from "vitest";
import { ACTION_SCOPES, type Action, allows, derivationProblem, effectiveScopes, may, type Scope } from "../../src/domain/access-scopes";
import { parseManagedToken } from "../../src/domain/managed-token";
import { scopeNeeded } from "../../src/mcp/message-scopes";

describe("scope rules", () => {
  it.each([
    [["read"], "read", true],
    [["read"], "write", false],
    [["read"], "admin", false],
    [["write"], "read", true],
    [["write"], "write", true],
    [["write"], "admin", false],
    [["admin"], "read", false],
    [["admin"], "write", false],
    [["admin"], "admin", true],
    [["read", "write", "admin"], "admin", true],
    [[], "read", false],
  ] as [Scope[], Scope, boolean][])("%j allows %s: %s", (granted, needed, expected) => {
    expect(allows(granted, needed)).toBe(expected);
  });

  it.each([
    [["write"], ["read", "write"]],
    [
      ["admin", "read"],
      ["read", "admin"],
    ],
    [["admin"], ["admin"]],
  ] as [Scope[], Scope[]][])("%j holds %j", (granted, effective) => {
    expect(effectiveScopes(granted)).toEqual(effective);
  });
});

/**
 * The access matrix, written out: what each credential may do. `admin` alone may manage tokens,
 * grants, webhooks and settings, and create tokens no stronger than itself, but never read a
 * workflow or register a webhook (it would deliver workflow text).
 */
const CREDENTIALS = {
  read: ["read"],
  write: ["write"],
  admin: ["admin"],
  "admin+read": ["admin", "read"],
  bootstrap: ["read", "write", "admin"],
} as const satisfies Record<string, readonly Scope[]>;

/** One row per action; one column per credential above, in order: ✓ may, · may not. */
const MATRIX: [Action, string][] = [
  //                   read write admin admin+read bootstrap
  ["workflow.read", "    ✓    ✓     ·       ✓         ✓"],
  ["workflow.write", "   ·    ✓     ·       ·         ✓"],
  ["share.read", "       ✓    ✓     ·       ✓         ✓"],
  ["share.change", "     ·    ✓     ·       ·         ✓"],
  ["feedback.give", "    ·    ✓     ·       ·         ✓"],
  ["feedback.consume", " ·    ✓     ·       ·         ✓"],
  ["token.create", "     ·    ·     ✓       ✓         ✓"],
  ["token.manage", "     ·    ·     ✓       ✓         ✓"],
  ["grant.approve", "    ✓    ✓     ·       ✓         ✓"],
  ["grant.manage", "     ·    ·     ✓       ✓         ✓"],
  ["webhook.create", "   ·    ·     ·       ✓         ✓"],
  ["webhook.manage", "   ·    ·     ✓       ✓         ✓"],
  ["settings.change", "  ·    ·     ✓       ✓         ✓"],
  ["device.pair", "      ·    ✓     ·       ·         ✓"],
  ["device.manage", "    ·    ·     ✓       ✓         ✓"],
  ["github.configure", " ·    ·     ·       ·         ✓"],
];

describe("the access matrix", () => {
  const cells = MATRIX.flatMap(([action, row]) => {
    const marks = row.trim().split(/\s+/);
    return Object.entries(CREDENTIALS).map(([credential, scopes], column) => ({
      action,
      credential,
      scopes,
      allowed: marks[column] === "✓",
    }));
  });
  it("has a row for every action and a mark for every credential", () => {
    expect(MATRIX.map(([action]) => action).sort()).toEqual(Object.keys(ACTION_SCOPES).sort());
    for (const [action, row] of MATRIX) expect(row.trim().split(/\s+/), action).toHaveLength(Object.keys(CREDENTIALS).length);
  });
  it.each(cells)("$credential may $action: $allowed", ({ action, scopes, allowed }) => {
    expect(may(scopes, action)).toBe(allowed);
  });
});

describe("a credential never creates a stronger one", () => {
  const T = Date.parse("2030-01-01T00:00:00Z");
  it.each([
    ["bootstrap → every scope, no expiry", ["read", "write", "admin"], null, ["read", "write", "admin"], null, null],
    ["admin → admin", ["admin"], null, ["admin"], null, null],
    ["admin → read", ["admin"], null, ["read"], null, "scopes: this credential cannot give read; it holds only admin"],
    [
      "admin → read, write, admin",
      ["admin"],
      null,
      ["read", "write", "admin"],
      null,
      "scopes: this credential cannot give read, write; it holds only admin",
    ],
    ["write → read (write implies read)", ["write"], null, ["read"], null, null],
    ["read → write", ["read"], null, ["write"], null, "scopes: this credential cannot give write; it holds only read"],
    ["admin+write → read", ["admin", "write"], null, ["read"], null, null],
    [
      "expiring → no expiry",
      ["admin"],
      T,
      ["admin"],
      null,
      "expires_in_seconds: must end by 2030-01-01T00:00:00.000Z, when the credential creating it expires",
    ],
    [
      "expiring → later",
      ["admin"],
      T,
      ["admin"],
      T + 1,
      "expires_in_seconds: must end by 2030-01-01T00:00:00.000Z, when the credential creating it expires",
    ],
    ["expiring → the same end", ["admin"], T, ["admin"], T, null],
    ["expiring → sooner", ["admin"], T, ["admin"], T - 1, null],
  ] as [string, Scope[], number | null, Scope[], number | null, string | null][])(
    "%s",
    (_case, creatorScopes, creatorExpiry, scopes, expiresAt, problem) => {
      expect(derivationProblem({ scopes: creatorScopes, expiresAt: creatorExpiry }, { scopes, expiresAt })).toBe(problem);
    },
  );
});

describe("what each MCP message needs", () => {
  it.each([
    [{ method: "tools/call", params: { name: "start_workflow" } }, "write"],
    [{ method: "tools/call", params: { name: "complete_task" } }, "write"],
    [{ method: "tools/call", params: { name: "get_workflow" } }, "read"],
    [{ method: "tools/call", params: { name: "no_such_tool" } }, null],
    [{ method: "resources/read", params: {} }, "read"],
    [{ method: "resources/list" }, "read"],
    [{ method: "resources/templates/list" }, "read"],
    [{ method: "prompts/get", params: { name: "resume" } }, "read"],
    [{ method: "prompts/list" }, null],
    [{ method: "tools/list" }, null],
    [{ method: "initialize" }, null],
  ])("%j needs %s", (message, needed) => {
    expect(scopeNeeded(message)).toBe(needed);
  });
});

describe("managed token format", () => {
  const secret = "a".repeat(40);
  it.each([
    [`wmk_acme_abcdefghijk2_${secret}`, { account: "acme", id: "abcdefghijk2" }],
    [`wmk_acme_co_abcdefghijk2_${secret}`, { account: "acme_co", id: "abcdefghijk2" }],
    [`wmk_a-b_abcdefghijk2_${secret}`, { account: "a-b", id: "abcdefghijk2" }],
    [`wmk_acme_abcdefghijk1_${secret}`, null],
    [`wmk_acme_abcdefghijk2_${secret}x`, null],
    [`wmk_Acme_abcdefghijk2_${secret}`, null],
    [`wmk__abcdefghijk2_${secret}`, null],
    ["token-acme-0123456789", null],
  ])("%s → %j", (token, ref) => {
    expect(parseManagedToken(token)).toEqual(ref);
  });
});
