import { describe, expect, it } from "vitest";
import { webhookUrlProblem } from "../../src/domain/webhook-url";

describe("webhook URL rules", () => {
  it.each([
    [undefined, "url: is required (an http(s) URL)"],
    ["not a url", "url: must be an absolute http(s) URL"],
    ["ftp://example.com/x", "url: must use http or https"],
    ["https://user:pw@example.com/x", "url: must not contain credentials"],
    [`https://example.com/${"x".repeat(2048)}`, "url: must be at most 2048 characters"],
    [
      "http://127.0.0.1:9/hook",
      "url: private, loopback and link-local hosts are refused (set WAYMARK_WEBHOOK_ALLOW_PRIVATE=true to allow them)",
    ],
  ])("refuses %s", (url, message) => {
    expect(webhookUrlProblem(url, false)).toBe(message);
  });

  it("allows private hosts only when configured", () => {
    expect(webhookUrlProblem("http://127.0.0.1:9/hook", true)).toBeNull();
  });
});
