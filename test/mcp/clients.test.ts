import { describe, expect, it } from "vitest";
import { callTool, connect, ok } from "../support/mcp-client";
import { EXPECTED_TOOLS } from "../support/tools";
import { workerTarget } from "../support/worker";

describe.each([
  ["SDK v2 client", () => connect(workerTarget())],
  ["SDK v1 client", () => connect(workerTarget(), { sdk: "v1" })],
])("%s through the Worker", (_label, connect) => {
  it("lists the tools", async () => {
    const client = await connect();
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name).sort()).toEqual([...EXPECTED_TOOLS]);
  });

  it("runs a workflow written against the reference document", async () => {
    const client = await connect();
    const wf = await ok<{ workflow_id: string; created_at: string }>(client, "start_workflow", {
      name: "Migration NextAuth v5",
      description: "Migrer de NextAuth v4 vers v5",
      plan: [
        { step: "1", goal: "Installer NextAuth v5" },
        { step: "2", goal: "Configurer routes API" },
      ],
    });
    expect(wf.workflow_id).toMatch(/^wf_[a-z2-7]{20}$/);
    expect(Date.parse(wf.created_at)).not.toBeNaN();
    const task = await ok<{ task_id: string; snapshot_type: string }>(client, "start_task", {
      workflow_id: wf.workflow_id,
      name: "Setup JWT middleware",
      goal: "Create middleware to verify JWT tokens",
    });
    expect(task.snapshot_type).toBe("none");
    await ok(client, "log_decision", {
      task_id: task.task_id,
      category: "library_choice",
      question: "Quelle librairie JWT ?",
      options_considered: ["jsonwebtoken", "jose"],
      chosen: "jsonwebtoken",
      reasoning: "Plus mature et documenté",
    });
    await ok(client, "log_issue", {
      task_id: task.task_id,
      type: "documentation_gap",
      description: "Doc obsolète",
      resolution: "Exemples GitHub",
      requires_human_review: false,
    });
    await ok(client, "log_milestone", { task_id: task.task_id, message: "Installing jsonwebtoken...", progress: 50 });
    const done = await callTool(client, "complete_task", {
      task_id: task.task_id,
      status: "success",
      outcome: { summary: "JWT middleware créé", achievements: ["Middleware vérifie signature JWT"], limitations: [] },
      metadata: { packages_added: ["jsonwebtoken"], commands_executed: ["npm test"], tests_status: "passed" },
    });
    expect(done.isError).toBe(false);
    expect(done.structured).toMatchObject({
      task_id: task.task_id,
      files_changed: { added: [], modified: [], deleted: [] },
      verification: { scope_match: true, unexpected_files: [] },
    });
    expect(typeof done.structured.duration_seconds).toBe("number");
    expect(done.text).toContain(task.task_id);
    expect(String((done.structured.verification as { warnings: string[] }).warnings)).toMatch(/not computed/);
  });
});
