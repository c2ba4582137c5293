#!/usr/bin/env node
/**
 * @module scripts/check-doc-paths
 * Every path the docs and the code comments name exists (`npm run check:paths`, in `npm run check`
 * and .ci/run). What counts as a path:
 *   - in the docs (README.md, AGENTS.md, BENCHMARKS.md, docs/*.md, the packages' READMEs): a
 *     Markdown link's relative target; a token that starts with one of the repository's top-level
 *     folders (`src/…`, `test/…`, `docs/…`, `client-helper/…`, …) or `./`, `../`, backticked or
 *     not; and in AGENTS.md's map (its first fenced block), each entry's name under the folder
 *     its indentation puts it in;
 *   - in code comments (`//`, `/* … *\/`, `#` in shell scripts): the same repository paths, a
 *     relative module (`./x`, `../x`, resolved from the file with the usual extensions), and in
 *     src/ a folder-relative module (`workflow/writer`: src/workflow/writer.ts).
 * Not paths: URLs and URL paths (`/api/…`), globs and placeholders (`*`, `<name>`, `{a,b}`),
 * what git ignores (build output, bench results, caches), and the example paths of a user's
 * repository that the docs and comments use to explain a rule: EXAMPLE_ROOTS (their folders do
 * not exist here; a folder that does exist is always checked).
 * Also: every table docs/storage.md lists (the first cell of a row under a `| table |` header) is
 * created by a statement in src (the migrations), so the storage doc names no table that is not there.
 * A path the package it is written in resolves (client-helper/README.md's `src/…` is
 * client-helper/src/…) counts too. Prints each missing path with where it is named; exits 1 when
 * there is one.
 */
import { execFileSync, spawnSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { dirname, join, normalize } from "node:path";

const ROOT = join(import.meta.dirname, "..");

/**
 * A user's repository as the docs and comments explain rules with it: folders that do not exist
 * here (a folder that does is checked all the same), and a few files of test fixtures.
 */
const EXAMPLE_ROOTS = ["src/api", "src/auth", "src/billing", "src/middleware"];
const EXAMPLE_FILES = new Set(["src/caf", "src/sum.js", "src/file-1.txt"]);

const tracked = execFileSync("git", ["ls-files", "-z"], { cwd: ROOT, encoding: "utf8" }).split("\0").filter(Boolean);
const TOP = [...new Set(tracked.filter((file) => file.includes("/")).map((file) => file.split("/")[0]))];
const SRC_FOLDERS = [...new Set(tracked.filter((f) => /^src\/[^/]+\//.test(f)).map((f) => f.split("/")[1]))];

const DOCS = tracked.filter((f) =>
  /^(README|AGENTS|BENCHMARKS)\.md$|^docs\/[^/]+\.md$|^(client-helper|packages\/[^/]+)\/README\.md$/.test(f),
);
const CODE = tracked.filter((f) => /\.(ts|mts|mjs|cjs|js)$/.test(f) && !f.endsWith(".d.ts"));
const SCRIPTS = tracked.filter((f) => /\.(sh|py|toml)$/.test(f) || f === ".ci/run");

/** A repository path (`src/…`, `docs/…`), or one relative to the file. */
const PATH = new RegExp(
  String.raw`(?<![\w./@:-])((?:\.{1,2}/)+[\w.-][\w./-]*|(?:${TOP.map((t) => t.replace(".", "\\.")).join("|")})/[\w./-]*)`,
  "g",
);
const SRC_MODULE = new RegExp(String.raw`(?<![\w./@:-])((?:${SRC_FOLDERS.join("|")})/[a-z][\w-]*(?:\.ts)?)(?![\w/-])`, "g");

/** Of `paths`, those git ignores (build output, bench results, caches): one git call for all of them. */
function gitIgnored(paths) {
  if (paths.length === 0) return new Set();
  const candidates = paths.flatMap((path) => [path, `${path}/`]);
  const run = spawnSync("git", ["check-ignore", "--no-index", "--stdin"], {
    cwd: ROOT,
    input: `${candidates.join("\n")}\n`,
    encoding: "utf8",
  });
  return new Set(
    run.stdout
      .split("\n")
      .filter(Boolean)
      .map((path) => path.replace(/\/$/, "")),
  );
}

/** The package folder a file belongs to (client-helper, packages/protocol), or "". */
function packageOf(file) {
  const match = /^(client-helper|packages\/[^/]+)\//.exec(file);
  return match ? match[1] : "";
}

const MODULE_EXTENSIONS = ["", ".ts", ".mts", ".js", ".mjs", ".cjs", ".json", "/index.ts"];
const exists = (path, extensions = [""]) => extensions.some((ext) => existsSync(join(ROOT, path + ext)));

/**
 * Whether `token`, named in `file`, names something that exists (or is not a path of this
 * repository at all); for a repository path that does not exist, the path (git may ignore it).
 */
function resolves(token, file, { module = false } = {}) {
  let path = token.replace(/[.,:;)]+$/, "").replace(/#.*$/, "");
  if (path === "" || /[*<>{}$]/.test(path) || path.includes("//")) return true;
  const extensions = module ? MODULE_EXTENSIONS : [""];
  if (path.startsWith(".")) {
    if (!/^\.{1,2}\//.test(path)) return true;
    return exists(normalize(join(dirname(file), path)), extensions);
  }
  path = path.replace(/\/+$/, "/");
  const bare = path.replace(/\/$/, "");
  if (EXAMPLE_FILES.has(bare)) return true;
  const example = EXAMPLE_ROOTS.find((root) => bare.startsWith(root) && /^($|[/.*])/.test(bare.slice(root.length)));
  if (example && !exists(example)) return true;
  const own = packageOf(file);
  return exists(bare, extensions) || (own !== "" && exists(join(own, bare), extensions)) || bare;
}

/** The text of the comments in a JS/TS source, strings, templates and regular expressions skipped. */
function commentsOf(source) {
  const out = [];
  let i = 0;
  let previous = "";
  while (i < source.length) {
    const c = source[i];
    const next = source[i + 1];
    if (c === "/" && next === "/") {
      const end = source.indexOf("\n", i);
      const stop = end === -1 ? source.length : end;
      out.push({ text: source.slice(i + 2, stop), at: i + 2 });
      i = stop;
      continue;
    }
    if (c === "/" && next === "*") {
      const end = source.indexOf("*/", i + 2);
      const stop = end === -1 ? source.length : end;
      out.push({ text: source.slice(i + 2, stop), at: i + 2 });
      i = stop + 2;
      continue;
    }
    if (c === '"' || c === "'" || c === "`") {
      i++;
      let depth = 0;
      while (i < source.length) {
        if (source[i] === "\\") {
          i += 2;
          continue;
        }
        if (c === "`" && source.startsWith("${", i)) depth++;
        else if (c === "`" && depth > 0 && source[i] === "}") depth--;
        else if (source[i] === c && depth === 0) break;
        i++;
      }
      i++;
      previous = "a";
      continue;
    }
    if (c === "/" && (previous === "" || /[(,=:[!&|?{};+\-*%<>~^]/.test(previous))) {
      // A regular expression literal: skip to its closing slash (classes may hold one).
      i++;
      let inClass = false;
      while (i < source.length && source[i] !== "\n") {
        if (source[i] === "\\") i++;
        else if (source[i] === "[") inClass = true;
        else if (source[i] === "]") inClass = false;
        else if (source[i] === "/" && !inClass) break;
        i++;
      }
      i++;
      previous = "a";
      continue;
    }
    if (!/\s/.test(c)) previous = c;
    i++;
  }
  return out;
}

const lineOf = (text, index) => text.slice(0, index).split("\n").length;
const missing = [];
let checked = 0;
/** `path`: a repository path that does not exist, dropped at the end when git ignores it. */
const report = (file, line, token, path = null) => missing.push({ where: `${file}:${line}: ${token}`, path });

/** Whether `index` of `text` is inside a backticked span (code or a command, as `./run-tests`). */
function backticked(text, index) {
  return (text.slice(0, index).match(/`/g) ?? []).length % 2 === 1;
}

function checkText(file, text, offset, whole, { srcModules }) {
  const doc = file.endsWith(".md");
  for (const match of text.matchAll(PATH)) {
    // A relative path in a doc is a command a user runs (`./run-tests`) unless it is a link (checked below); in a
    // comment it is a module, unless backticked.
    if (match[1].startsWith(".") && (doc || backticked(text, match.index))) continue;
    checked++;
    const resolved = resolves(match[1], file, { module: !doc });
    if (resolved !== true) report(file, lineOf(whole, offset + match.index), match[1], typeof resolved === "string" ? resolved : null);
  }
  if (!srcModules) return;
  for (const match of text.matchAll(SRC_MODULE)) {
    if (/@module\s+$/.test(text.slice(Math.max(0, match.index - 10), match.index))) {
      // The module's own name: the file's path below src/.
      if (`src/${match[1]}.ts` !== file) report(file, lineOf(whole, offset + match.index), `@module ${match[1]} (the file is ${file})`);
      continue;
    }
    checked++;
    if (!exists(`src/${match[1]}`, MODULE_EXTENSIONS)) report(file, lineOf(whole, offset + match.index), match[1]);
  }
}

const MAP_FENCE = /^```\n([\s\S]*?)^```/m;

/**
 * AGENTS.md's map (its first fenced block): each entry's name under the folder its indentation
 * puts it in (a package's `src/` may be left out: packages/protocol's modules are listed bare),
 * and the files its descriptions name (`with task-files.ts`, `hooks/hook-command.ts`): somewhere
 * in the same top folder (descriptions name their neighbours loosely) or the protocol package.
 */
function checkMap(file, text) {
  const fence = MAP_FENCE.exec(text);
  if (!fence) return;
  const stack = [];
  let at = fence.index + 4;
  const found = (folders, name) => folders.some((folder) => exists(join(folder, name)) || exists(join(folder, "src", name)));
  for (const line of fence[1].split("\n")) {
    const entry = /^( *)([\w.-][\w./-]*?)(\/?)(?=[ ,]|$)/.exec(line);
    const indent = entry ? entry[1].length : Number.POSITIVE_INFINITY;
    // An entry sits at most a step deeper than its folder; a description's next line starts far right.
    const isEntry = entry !== null && indent <= (stack.at(-1)?.indent ?? -2) + 4 && (/\.\w+$/.test(entry[2]) || entry[3] === "/");
    if (isEntry) while (stack.length > 0 && stack[stack.length - 1].indent >= indent) stack.pop();
    const folder = stack.at(-1)?.path ?? "";
    if (isEntry) {
      checked++;
      if (!found([folder], entry[2] + entry[3])) report(file, lineOf(text, at), join(folder, entry[2] + entry[3]));
      if (entry[3] === "/")
        stack.push({ indent, path: exists(join(folder, entry[2])) ? join(folder, entry[2]) : join(folder, "src", entry[2]) });
    }
    const section = stack[0]?.path ?? "";
    const description = isEntry ? line.slice(entry[0].length) : line;
    const inFolder = isEntry && entry[3] === "/" ? stack.at(-1).path : folder;
    for (const named of description.matchAll(/(?<![\w./@:-])([\w-]+(?:\/[\w-]+)*\.(?:ts|mjs|json|sh|md))(?![\w/])/g)) {
      checked++;
      if (backticked(description, named.index) || found([inFolder, ""], named[1])) continue;
      const near = [section, "packages/protocol/src"].map((top) => `${top}/`);
      if (!tracked.some((f) => near.some((top) => f.startsWith(top)) && (f.endsWith(`/${named[1]}`) || f === named[1])))
        report(file, lineOf(text, at), `${named[1]} (in ${inFolder || "the map"})`);
    }
    at += line.length + 1;
  }
}

for (const file of DOCS) {
  const text = readFileSync(join(ROOT, file), "utf8");
  // Fenced code blocks are shell sessions: their paths are read like prose. AGENTS.md's map is a
  // tree whose names are relative to their folders: checkMap reads it.
  const prose = file === "AGENTS.md" ? text.replace(MAP_FENCE, (block) => block.replace(/[^\n]/g, " ")) : text;
  checkText(file, prose, 0, text, { srcModules: false });
  for (const link of text.matchAll(/\]\(([^)\s]+)\)/g)) {
    const target = link[1].replace(/#.*$/, "");
    if (target === "" || /^[a-z][a-z+.-]*:/i.test(target) || target.startsWith("/")) continue;
    checked++;
    if (!existsSync(join(ROOT, dirname(file), target))) report(file, lineOf(text, link.index), link[1]);
  }
  if (file === "AGENTS.md") checkMap(file, text);
}

for (const file of CODE) {
  const source = readFileSync(join(ROOT, file), "utf8");
  for (const comment of commentsOf(source)) checkText(file, comment.text, comment.at, source, { srcModules: file.startsWith("src/") });
}

for (const file of SCRIPTS) {
  const source = readFileSync(join(ROOT, file), "utf8");
  for (const match of source.matchAll(/(^|\s)#(?!!)(.*)$/gm)) {
    const at = match.index + match[1].length + 1;
    checkText(file, match[2], at, source, { srcModules: false });
  }
}

// docs/storage.md's tables: each one a migration creates.
const created = new Set();
for (const file of tracked.filter((f) => /^src\/.*\.ts$/.test(f))) {
  for (const table of readFileSync(join(ROOT, file), "utf8").matchAll(/CREATE (?:VIRTUAL )?TABLE (?:IF NOT EXISTS )?(\w+)/g))
    created.add(table[1]);
}
const storage = readFileSync(join(ROOT, "docs/storage.md"), "utf8");
for (const row of storage.matchAll(/^\| ([^|\n]+)\|/gm)) {
  const header = storage
    .slice(0, row.index)
    .trimEnd()
    .split("\n")
    .reverse()
    .find((line) => !line.startsWith("|") || /^\| *table *\|/.test(line));
  if (!header?.startsWith("|")) continue;
  for (const name of row[1].matchAll(/`(\w+)(?:\.\w+)?`/g)) {
    checked++;
    if (!created.has(name[1])) report("docs/storage.md", lineOf(storage, row.index), `table ${name[1]} (no migration creates it)`);
  }
}

const ignoredPaths = gitIgnored([...new Set(missing.flatMap((m) => (m.path ? [m.path] : [])))]);
const absent = missing.filter((m) => !(m.path && ignoredPaths.has(m.path))).map((m) => m.where);
if (absent.length > 0) {
  console.error(`${absent.length} path(s) named in docs or comments do not exist:`);
  for (const line of absent) console.error(`  ${line}`);
  process.exit(1);
}
console.log(`paths named in docs and comments: all ${checked} exist (${DOCS.length} docs, ${CODE.length + SCRIPTS.length} code files)`);
