/**
 * @module instructions
 * The short instructions an agent follows to keep a record: when to open a workflow and tasks,
 * what to declare, what to log and how sparingly, and to close what it opened. One text, two
 * readers: `waymark init` and the plugins write it into each agent's instructions (CLAUDE.md,
 * AGENTS.md, a Cursor rule, a plugin's skill) and the server offers it as the MCP prompt `instructions`, for clients that know
 * nothing of init. Kept short: every line costs the agent context in every session.
 */

export const INSTRUCTIONS = `## Waymark: keep a record of your work

This project records agent work in Waymark through the \`waymark\` MCP server.
- Before substantial work (a feature, a fix, a refactor), resume the open workflow named at
  session start, or find it with \`get_workflow\`; otherwise call \`start_workflow\` with a
  short name (and a plan when the work has several steps).
- Call \`start_task\` before each distinct piece of work, with a precise \`goal\` and the
  \`areas\` it will touch (e.g. \`["auth", "src/api/**"]\`). Waymark records the files the
  task changes from git: do not list them yourself.
- \`log_decision\` only real choices between alternatives, \`log_issue\` only problems a
  reader should know about. Skip routine steps.
- When a task's work is done, call \`complete_task\` with its status and a 2-4 sentence
  outcome before starting the next. Do not leave a task open when you stop working on it.
- When the whole goal is reached, call \`complete_workflow\`.
- Questions and one-line edits need no workflow.`;
