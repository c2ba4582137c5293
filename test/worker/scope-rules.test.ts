import { describe, expect, it } from "vitest";
import { parseManagedToken } from "../../src/account/tokens";
import { allows, effectiveScopes, type Scope } from "../../src/domain/access-scopes";
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
