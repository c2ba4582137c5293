import { INSTRUCTIONS } from "@waymark/protocol/instructions";
import { describe, expect, it } from "vitest";
import { connect, ok } from "../support/mcp-client";
import { accountIndexed, rpc, TOKENS, workerTarget } from "../support/worker";

/** The text of a prompt's one message. */
function textOf(got: { messages: { content: unknown }[] }): string {
  return (got.messages[0]?.content as { text?: string } | undefined)?.text ?? "";
}

/** The prompts as clients that show them as commands use them: listed, then fetched by name. */
describe("prompts", () => {
  // First, while acme has no workflow yet (storage is per test file).
  it("says so when there is nothing to resume, and names the field a bad argument breaks", async () => {
    const client = await connect(workerTarget(TOKENS.acme));
    const got = await client.getPrompt({ name: "resume" });
    expect(got.messages).toEqual([
      { role: "user", content: { type: "text", text: "You have no open Waymark workflow. Before substantial work, call start_workflow." } },
    ]);
    const { body } = await rpc({
      jsonrpc: "2.0",
      id: 2,
      method: "prompts/get",
      params: { name: "resume", arguments: { workflow_id: "x".repeat(65) } },
    });
    expect(body?.error).toMatchObject({ code: -32602, message: expect.stringContaining("workflow_id") });
  });

  it("lists instructions and resume, with resume's one optional argument", async () => {
    const client = await connect(workerTarget());
    const { prompts } = await client.listPrompts();
    expect(prompts.map((p) => p.name)).toEqual(["instructions", "resume"]);
    expect(prompts[1]?.arguments).toEqual([expect.objectContaining({ name: "workflow_id", required: false })]);
  });

  it("gives the instructions `waymark init` writes, word for word (one source)", async () => {
    const client = await connect(workerTarget(), { sdk: "v1" });
    const got = await client.getPrompt({ name: "instructions" });
    expect(got.messages).toEqual([{ role: "user", content: { type: "text", text: INSTRUCTIONS } }]);
  });

  it("resumes the most recently updated open workflow compactly, naming the others", async () => {
    const client = await connect(workerTarget(TOKENS.globex));
    const older = (await ok<{ workflow_id: string }>(client, "start_workflow", { name: "Older work" })).workflow_id;
    const id = (
      await ok<{ workflow_id: string }>(client, "start_workflow", { name: "Billing <v2>", plan: [{ step: "1", goal: "Invoices" }] })
    ).workflow_id;
    const done = (await ok<{ task_id: string }>(client, "start_task", { workflow_id: id, name: "Schema", goal: "Tables" })).task_id;
    await ok(client, "complete_task", { task_id: done, status: "success", outcome: { summary: "Tables added" } });
    const open = (await ok<{ task_id: string }>(client, "start_task", { workflow_id: id, name: "Invoices", goal: "PDF invoices" })).task_id;
    await ok(client, "log_milestone", { task_id: open, message: "half way" });
    await accountIndexed(older, id);

    const got = await client.getPrompt({ name: "resume" });
    const text = textOf(got);
    expect(got.messages).toHaveLength(1);
    expect(text).toContain(`${id} "Billing <v2>" active`);
    expect(text).toContain(`open: ${open} Invoices`);
    expect(text).toContain(`done: ${done} Schema (success): Tables added`);
    expect(text).toContain(`other open workflows: ${older} "Older work"`);
    expect(new TextEncoder().encode(text).byteLength).toBeLessThan(1500);

    const named = await client.getPrompt({ name: "resume", arguments: { workflow_id: older } });
    expect(textOf(named)).toContain(`${older} "Older work" active`);
  });

  it("refuses another account's workflow with the same answer as an unknown one", async () => {
    const acme = await connect(workerTarget(TOKENS.acme));
    const theirs = (await ok<{ workflow_id: string }>(acme, "start_workflow", { name: "Acme secret" })).workflow_id;
    const globex = await connect(workerTarget(TOKENS.globex));
    for (const id of [theirs, "wf_nosuchworkflow"]) {
      await expect(globex.getPrompt({ name: "resume", arguments: { workflow_id: id } })).rejects.toThrow(
        `NOT_FOUND: workflow_id: no workflow ${id} in this account`,
      );
    }
  });
});
