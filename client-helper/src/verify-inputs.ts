/**
 * @module verify-inputs
 * What `waymark verify` reads before it checks anything, each read so that it cannot mean two
 * things: the export (strict JSON: @waymark/protocol/strict-json refuses duplicate members, lone
 * surrogates, numbers other parsers read otherwise, bytes that are not UTF-8), the deployment's
 * public keys (from its well-known URL or a file) and the allowed signers (the device keys pinned
 * outside the server: `--allowed-signers <file>`, else `.waymark/allowed-signers` in the `--repo`
 * clone, else in the repository the command runs in). A file that cannot be used is a
 * VerifyUsageError naming it and the rule; an export refused for its JSON is an ExportRefused.
 */
import { existsSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { dirname, join, resolve } from "node:path";
import { ALLOWED_SIGNERS_PATH, type AllowedSigner, AllowedSignersError, parseAllowedSigners } from "@waymark/protocol/allowed-signers";
import { keyThumbprint, type PublishedKey, parsePublishedKeys, SIGNING_KEYS_PATH } from "@waymark/protocol/statement";
import { StrictJsonError, strictJsonParse, strictUtf8 } from "@waymark/protocol/strict-json";

/** Input that cannot be used at all (exit 2). */
export class VerifyUsageError extends Error {}

/** An export whose JSON could mean different things to different parsers: refused, not checked (exit 1). */
export class ExportRefused extends Error {}

const FETCH_TIMEOUT_MS = 30_000;

async function bytesOf(file: string, what: string): Promise<Uint8Array> {
  try {
    return await readFile(file);
  } catch (error) {
    throw new VerifyUsageError(`cannot read ${what}${file}: ${(error as Error).message}`);
  }
}

/**
 * The export, parsed strictly: what no JSON parser reads is a usage error; what JSON.parse reads
 * but another parser may read otherwise (or the bytes are not UTF-8) is refused.
 */
export async function readExport(file: string): Promise<unknown> {
  const bytes = await bytesOf(file, "");
  let text = "";
  try {
    text = strictUtf8(bytes);
    return strictJsonParse(text);
  } catch (error) {
    if (!(error instanceof StrictJsonError)) throw error;
    if (text !== "" && !parses(text)) throw new VerifyUsageError(`${file} is not JSON: pass a workflow's export.json`);
    throw new ExportRefused(`${file}: refused, ${error.message}. Nothing in it was checked.`);
  }
}

function parses(text: string): boolean {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}

/** The keys a `--key` file holds: the well-known document, a JWK or a list of JWKs (first current, the rest retired). */
export async function keysFromFile(file: string): Promise<PublishedKey[]> {
  let value: unknown;
  try {
    value = strictJsonParse(strictUtf8(await bytesOf(file, "--key ")));
  } catch (error) {
    if (error instanceof VerifyUsageError) throw error;
    throw new VerifyUsageError(
      `--key ${file}: not JSON every parser reads alike (${(error as Error).message}); give the document at ${SIGNING_KEYS_PATH}, or one public key as a JWK`,
    );
  }
  const list = Array.isArray(value) ? value : value !== null && typeof value === "object" && "keys" in value ? null : [value];
  try {
    if (list === null) return parsePublishedKeys(value);
    return parsePublishedKeys({
      keys: list.map((key: unknown, i) => {
        const jwk = key as { x?: unknown; kid?: unknown; status?: unknown } | null;
        return {
          ...jwk,
          kid: jwk?.kid ?? (typeof jwk?.x === "string" ? keyThumbprint(jwk.x) : undefined),
          status: jwk?.status ?? (i === 0 ? "current" : "retired"),
        };
      }),
    });
  } catch (error) {
    throw new VerifyUsageError(`--key ${file}: ${(error as Error).message}`);
  }
}

/** The deployment's published keys, read from its well-known URL. */
export async function keysFromEndpoint(endpoint: string): Promise<{ keys: PublishedKey[]; url: string }> {
  if (!URL.canParse(endpoint) || !/^https?:$/.test(new URL(endpoint).protocol)) {
    throw new VerifyUsageError(`--endpoint must be an http(s) URL, got ${JSON.stringify(endpoint)}`);
  }
  const url = new URL(SIGNING_KEYS_PATH, endpoint).href;
  let response: Response;
  try {
    response = await fetch(url, { signal: AbortSignal.timeout(FETCH_TIMEOUT_MS), redirect: "error" });
  } catch (error) {
    throw new VerifyUsageError(
      `cannot read the signing keys at ${url}: ${(error as Error).message} (check --endpoint, or pass --key <file>)`,
    );
  }
  if (!response.ok)
    throw new VerifyUsageError(`cannot read the signing keys at ${url}: HTTP ${response.status} (check --endpoint, or pass --key <file>)`);
  try {
    return { keys: parsePublishedKeys(strictJsonParse(strictUtf8(new Uint8Array(await response.arrayBuffer())))), url };
  } catch (error) {
    throw new VerifyUsageError(`the signing keys at ${url} are not a key document: ${(error as Error).message}`);
  }
}

/** The repository `dir` is in (its top level, found by its `.git`), or null. */
function repositoryOf(dir: string): string | null {
  for (let at = resolve(dir); ; at = dirname(at)) {
    if (existsSync(join(at, ".git"))) return at;
    if (dirname(at) === at) return null;
  }
}

/**
 * The allowed signers and the file they came from: `--allowed-signers`, else the repository's
 * `.waymark/allowed-signers` (the `--repo` clone's, else the current directory's). Null: none found.
 */
export async function readAllowedSigners(
  flag: string | undefined,
  repo: string | undefined,
  cwd: string,
): Promise<{ signers: AllowedSigner[]; file: string } | null> {
  let file = flag;
  if (file === undefined) {
    const root = repositoryOf(repo ?? cwd);
    const found = root === null ? null : join(root, ALLOWED_SIGNERS_PATH);
    if (found === null || !existsSync(found)) return null;
    file = found;
  }
  const bytes = await bytesOf(file, "the allowed signers ");
  try {
    return { signers: parseAllowedSigners(strictUtf8(bytes)), file };
  } catch (error) {
    if (!(error instanceof AllowedSignersError || error instanceof StrictJsonError)) throw error;
    throw new VerifyUsageError(`the allowed signers ${file}: ${error instanceof StrictJsonError ? error.reason : error.message}`);
  }
}
