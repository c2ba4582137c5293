/**
 * @module ci/policy-file
 * The repository's `.waymark/policy.yml`, read for `waymark ci`: bounded before it is parsed
 * (POLICY_MAX_BYTES), parsed as YAML with the `yaml` library (bundled into the helper) in its strict
 * form: one document, no duplicate keys, YAML 1.2 core schema (so `yes` stays a string, never true),
 * few aliases; then checked against the policy's schema (@waymark/protocol/policy). A file that is
 * there but wrong is a usage error naming the line or the field, never a silent "no policy".
 */
import { readFile, stat } from "node:fs/promises";
import { POLICY_MAX_BYTES, type Policy, parsePolicy } from "@waymark/protocol/policy";
import { parseAllDocuments } from "yaml";

export class PolicyFileError extends Error {}

/** The policy at `path`, or null when there is no file there. */
export async function readPolicyFile(path: string): Promise<Policy | null> {
  let size: number;
  try {
    size = (await stat(path)).size;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return null;
    throw new PolicyFileError(`${path}: ${(error as Error).message}`);
  }
  if (size > POLICY_MAX_BYTES) throw new PolicyFileError(`${path}: ${size} bytes, more than a policy may be (${POLICY_MAX_BYTES})`);
  return parsePolicyText(await readFile(path, "utf8"), path);
}

/** Parses a policy file's text; every problem is named with the file and its line or field. */
export function parsePolicyText(text: string, path: string): Policy {
  if (new TextEncoder().encode(text).length > POLICY_MAX_BYTES) throw new PolicyFileError(`${path}: more than ${POLICY_MAX_BYTES} bytes`);
  const documents = parseAllDocuments(text, { schema: "core", uniqueKeys: true, prettyErrors: true, strict: true });
  const list = Array.isArray(documents) ? documents : [documents];
  const [document] = list;
  if (!document) throw new PolicyFileError(`${path}: is empty (a policy needs at least \`version: 1\`)`);
  if (list.length > 1) throw new PolicyFileError(`${path}: must hold one YAML document, it holds ${list.length}`);
  const error = document.errors[0];
  if (error) throw new PolicyFileError(`${path}: ${error.message.split("\n")[0]?.replace(/:$/, "")}`);
  let value: unknown;
  try {
    value = document.toJS({ maxAliasCount: 10 });
  } catch (error) {
    // The library refuses aliases that would expand past the bound (a "billion laughs" document).
    throw new PolicyFileError(`${path}: ${(error as Error).message}`);
  }
  const parsed = parsePolicy(value);
  if ("problems" in parsed) throw new PolicyFileError(`${path}: ${parsed.problems.join("; ")}`);
  return parsed.policy;
}
