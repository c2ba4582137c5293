import { describe, expect, it } from "vitest";
import { TOKENS, workerFetch } from "../support/worker";
import { streamedBody } from "./streamed-body";

const ORIGIN = "http://localhost";
const bearer = { Authorization: `Bearer ${TOKENS.acme}` };

/** The JSON APIs other than /mcp: bounded bodies, `{code, message}` errors, hostile query text. */
describe("account API bounds and errors", () => {
  it("refuses a streamed oversized webhook body after reading little of it", async () => {
    const { body, pulled } = streamedBody(16);
    const response = await workerFetch(`${ORIGIN}/api/webhooks`, {
      method: "POST",
      headers: { ...bearer, "Content-Type": "application/json" },
      body,
      duplex: "half",
    } as RequestInit);
    expect(response.status).toBe(413);
    expect(await response.json()).toEqual({ code: "PAYLOAD_TOO_LARGE", message: "body: must be at most 8192 bytes" });
    expect(pulled()).toBeLessThan(4);
  });

  it.each([
    ["a NUL", "%00", "q: must be text without control characters"],
    ["an escape character", "abc%1Bdef", "q: must be text without control characters"],
    ["nothing", "", "q: is required (the words to search for)"],
  ])("search with %s in q is a clear 400", async (_case, q, message) => {
    const response = await workerFetch(`${ORIGIN}/api/search?q=${q}`, { headers: bearer });
    expect(response.status).toBe(400);
    expect(await response.json()).toEqual({ code: "INPUT_VALIDATION_ERROR", message });
  });

  it("malformed JSON is an INPUT_VALIDATION_ERROR, unknown fields are named", async () => {
    const post = (body: string) =>
      workerFetch(`${ORIGIN}/api/webhooks`, { method: "POST", headers: { ...bearer, "Content-Type": "application/json" }, body });
    const malformed = await post("{not json");
    expect(malformed.status).toBe(400);
    expect(((await malformed.json()) as { code: string }).code).toBe("INPUT_VALIDATION_ERROR");
    expect(await (await post(JSON.stringify({ url: "https://hooks.example.com/x", evnts: [] }))).json()).toEqual({
      code: "INPUT_VALIDATION_ERROR",
      message: "evnts: unknown field",
    });
  });

  it("a missing or wrong bearer is {code: UNAUTHORIZED} with WWW-Authenticate", async () => {
    const response = await workerFetch(`${ORIGIN}/api/webhooks`);
    expect(response.status).toBe(401);
    expect(response.headers.get("WWW-Authenticate")).toMatch(/^Bearer realm="waymark"/);
    expect(((await response.json()) as { code: string }).code).toBe("UNAUTHORIZED");
  });
});
