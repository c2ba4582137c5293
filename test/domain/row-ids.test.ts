/** @module row-ids.test — a log entry's id written in the same millisecond as the last sorts after it. */
import { describe, expect, it } from "vitest";
import { newRowId, rowIdAfter } from "../../src/ids";

describe("rowIdAfter", () => {
  it.each([
    ["ms_aaaaaaaaaaaa", "ms_aaaaaaaaaaab"],
    ["ms_aaaaaaaaaaa7", "ms_aaaaaaaaaaaa"],
    ["ms_aaaaaaaaaaaz", "ms_aaaaaaaaaab2"],
    ["dc_22222222222z", "dc_222222222232"],
    ["is_zzzzzzzzzzzy", "is_zzzzzzzzzzzz"],
  ])("%s → %s", (previous, next) => {
    expect(rowIdAfter(previous)).toBe(next);
    expect(next > previous).toBe(true);
  });

  it("always sorts after the id it follows and keeps its form, for random ids", () => {
    for (let n = 0; n < 2_000; n++) {
      const previous = newRowId("ms");
      const next = rowIdAfter(previous);
      expect(next > previous, `${previous} → ${next}`).toBe(true);
      expect(next).toMatch(/^ms_[a-z2-7]{12}$/);
    }
  });
});
