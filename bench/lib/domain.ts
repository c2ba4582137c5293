/**
 * The Worker's pure domain functions (src/domain), loaded into Node for the edge benches, from
 * this checkout or from another build's tree (an A/B in one run). The TypeScript is bundled
 * with esbuild (installed with wrangler) into one temporary module, so the benches run the same
 * code the Worker runs, without a build step; the benches only call the functions src/domain
 * exports.
 */
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { build } from "esbuild";

export interface FileState {
  mode: string;
  blob: string;
}

/** The subset of src/domain the benches call (shapes of the helper↔edge contract). */
export interface Domain {
  computeNetChanges(snapshot: unknown, changes: unknown): { path: string }[];
  summarizeChanges(changes: readonly { path: string }[]): unknown;
  checkScope(areas: readonly string[], paths: readonly string[]): { scope_match: boolean; unexpected_files: string[] };
}

const ROOT = join(import.meta.dirname, "..", "..");
const bundled = new Map<string, string>();

/**
 * The bundled module's file URL (the scope-match worker thread loads it too): src/domain of the
 * tree at `root` (default: this checkout), resolving packages from that tree's node_modules.
 */
export async function domainModuleUrl(root: string = ROOT): Promise<string> {
  const known = bundled.get(root);
  if (known) return known;
  const result = await build({
    entryPoints: [join(root, "src", "domain", "index.ts")],
    absWorkingDir: root,
    bundle: true,
    write: false,
    format: "esm",
    platform: "neutral",
    mainFields: ["module", "main"],
    logLevel: "silent",
  });
  const file = join(mkdtempSync(join(tmpdir(), "waymark-bench-domain-")), "domain.mjs");
  writeFileSync(file, result.outputFiles[0]?.text ?? "");
  const url = pathToFileURL(file).href;
  bundled.set(root, url);
  return url;
}

export async function loadDomain(root: string = ROOT): Promise<Domain> {
  return (await import(await domainModuleUrl(root))) as Domain;
}

/** A deterministic 40-hex id for a label (FNV-1a rounds). */
export function hex(label: string): string {
  let id = "";
  for (let seed = 0; id.length < 40; seed++) {
    let hash = (0x811c9dc5 ^ seed) >>> 0;
    for (const character of `${seed}:${label}`) hash = Math.imul(hash ^ character.charCodeAt(0), 0x01000193) >>> 0;
    id += hash.toString(16).padStart(8, "0");
  }
  return id.slice(0, 40);
}

/** One path's entry in a git list (its other fields are the states). */
type Entry = { path: string } & Record<string, unknown>;

const state = (content: string, mode = "100644"): FileState => ({ mode, blob: hex(content) });

/**
 * One task's git observations with `entries` paths, mixing every situation: dirty at start and
 * untouched, committed edits, renames, adds, deletes, edited then reverted. Paths arrive sorted
 * within each list, as git prints them, and parsed from JSON, as the Worker receives them (a
 * string built here by concatenation is a rope, which V8 hashes and compares more slowly than
 * any string a request body yields).
 */
export function observations(entries: number): { snapshot: unknown; changes: unknown } {
  return JSON.parse(JSON.stringify(builtObservations(entries))) as { snapshot: unknown; changes: unknown };
}

function builtObservations(entries: number): { snapshot: unknown; changes: unknown } {
  const startDirty: Entry[] = [];
  const committed: Entry[] = [];
  const endDirty: Entry[] = [];
  for (let index = 0; index < entries; index++) {
    const path = `packages/p${index % 97}/src/module${index}/file${index}.ts`;
    switch (index % 6) {
      case 0:
        startDirty.push({ path, head: state(`${index}a`), worktree: state(`${index}b`) });
        endDirty.push({ path, head: state(`${index}a`), worktree: state(`${index}b`) });
        break;
      case 1:
        committed.push({ path, before: state(`${index}a`), after: state(`${index}b`) });
        break;
      case 2:
        committed.push({ path, before: state(`${index}a`), after: null });
        committed.push({ path: `${path}.moved`, before: null, after: state(`${index}a`) });
        break;
      case 3:
        endDirty.push({ path, head: null, worktree: state(`${index}n`) });
        break;
      case 4:
        endDirty.push({ path, head: state(`${index}a`), worktree: null });
        break;
      default:
        committed.push({ path, before: state(`${index}a`), after: state(`${index}b`) });
        endDirty.push({ path, head: state(`${index}b`), worktree: state(`${index}a`) });
    }
  }
  const byPath = (a: Entry, b: Entry) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0);
  const head = hex("start");
  return {
    snapshot: { type: "git", head, dirty: startDirty.sort(byPath) },
    changes: { type: "git", start_head: head, head: hex("end"), committed: committed.sort(byPath), dirty: endDirty.sort(byPath) },
  };
}
