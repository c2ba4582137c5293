/**
 * @module command-rules
 * The user's own rules for what kind of check a command runs (`./run-tests` is a test run), read
 * from the user-level config `waymark init` writes (./endpoint.ts: $XDG_CONFIG_HOME/waymark/
 * config.json, else ~/.config/waymark/config.json) under `command_kinds`:
 * `{"command_kinds": {"test": ["./run-tests", "make check-all"], "lint": ["./lint.sh"]}}`.
 * Never from a repository's files: a cloned repository must not decide what counts as its tests
 * having run. Read on every recorded command, so it never fails: a missing or malformed file, or
 * a malformed entry, adds no rule.
 */
import { readFileSync } from "node:fs";
import { COMMAND_KINDS, type CommandKindRules } from "@waymark/protocol/command-kind";
import { userConfigPath } from "./endpoint.js";

/** Prefixes kept per kind, and the characters of each: a rule is a command's first words. */
const RULES_PER_KIND = 50;
const RULE_CHARS = 200;

export function userCommandRules(env: NodeJS.ProcessEnv = process.env): CommandKindRules {
  let config: unknown;
  try {
    config = JSON.parse(readFileSync(userConfigPath(env), "utf8"));
  } catch {
    return {};
  }
  const kinds = config && typeof config === "object" ? (config as { command_kinds?: unknown }).command_kinds : undefined;
  if (!kinds || typeof kinds !== "object" || Array.isArray(kinds)) return {};
  const rules: CommandKindRules = {};
  for (const kind of COMMAND_KINDS) {
    const prefixes = (kinds as Record<string, unknown>)[kind];
    if (!Array.isArray(prefixes)) continue;
    const kept = prefixes
      .filter((prefix): prefix is string => typeof prefix === "string" && prefix.trim() !== "" && prefix.length <= RULE_CHARS)
      .map((prefix) => prefix.trim())
      .slice(0, RULES_PER_KIND);
    if (kept.length > 0) rules[kind] = kept;
  }
  return rules;
}
