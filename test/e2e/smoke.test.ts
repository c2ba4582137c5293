import { expect, it } from "vitest";

it("runs in node", () => {
  expect(process.versions.node.startsWith("22")).toBe(true);
});
