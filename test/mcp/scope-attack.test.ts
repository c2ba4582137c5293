import { describe, expect, it } from "vitest";
import { connect, ok } from "../support/mcp-client";
import { workerTarget } from "../support/worker";

/**
 * The ReDoS replayed through the tools: an area that made a backtracking glob matcher take
 * seconds over long paths. The linear matcher's bound is proven by step counts in
 * test/domain/area-scope.test.ts; here the attack goes through start_task and complete_task as an
 * agent would send it, and the answer is complete and right.
 */
describe("scope check against a pathological area", () => {
  it("answers complete_task with every long path checked", async () => {
    const client = await connect(workerTarget());
    const { workflow_id } = await ok<{ workflow_id: string }>(client, "start_workflow", { name: "ReDoS replay" });
    const { task_id } = await ok<{ task_id: string }>(client, "start_task", {
      workflow_id,
      name: "n",
      goal: "g",
      areas: ["**/*a*a*a*a*a*a*a*a*a*b", "src/**"],
      snapshot: { type: "checksum", files: 0, digest: "d" },
    });
    const paths = Array.from({ length: 100 }, (_, index) => `${`${"a".repeat(40)}/`.repeat(90)}a${index}`);
    paths.push("src/ok.ts", `${"a".repeat(3000)}b`);
    const blob = "b".repeat(40);
    const done = await ok<{
      verification: { scope_match: boolean; unexpected_files: string[]; warnings: string[]; more?: { unexpected_files?: number } };
    }>(client, "complete_task", {
      task_id,
      status: "success",
      outcome: { summary: "s" },
      changes: { type: "checksum", transitions: paths.map((path) => ({ path, before: null, after: { mode: "100644", blob } })) },
    });
    expect(done.verification.scope_match).toBe(false);
    // Paths this long fill a result's bound after a few files: the record counts the rest (the JSON export lists them).
    expect(done.verification.unexpected_files.length + (done.verification.more?.unexpected_files ?? 0)).toBe(100);
    expect(done.verification.unexpected_files).not.toContain("src/ok.ts");
    expect(done.verification.warnings).toEqual([expect.stringMatching(/^100 file\(s\) changed outside declared scope/)]);
  });
});
