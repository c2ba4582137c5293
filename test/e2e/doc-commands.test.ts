/**
 * Every command the docs show names something real: each line of the shell blocks (```sh) of
 * README.md, docs/*.md and client-helper/README.md, and each `waymark …` usage line of their plain
 * blocks, is read as a shell reads it (quotes, line continuations, comments, `&&`, `|`,
 * redirections) and each simple command checked against what it names:
 * - `npm` and `npm run`: a script of package.json (`npm start -- <flags>`: flags `wrangler dev`
 *   takes; `npm run <script> -- <flags>`: flags the script's file reads);
 * - `waymark …` (bare, after the alias init prints, or through `npx --package=<tarball>`): a command
 *   of this helper, and every flag one its `--help` names;
 * - `npx <tool>`: a binary of node_modules/.bin (`npx node <file>`: the file exists; `npx wrangler
 *   <command>`: a command its `--help` knows);
 * - `claude …` and `codex …`: the subcommand and flags the pinned CLI's own `--help` lists (those
 *   lines are checked where the CLIs run; under CI=true they must);
 * - anything else: a program on PATH, or `export NAME=…`.
 * Placeholders (`<endpoint>`, `…`) stand for arguments and are not checked. What runs end to end,
 * in order, is test/e2e/newcomer.test.ts.
 */
import { spawnSync } from "node:child_process";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { cleanupTempDirs, tempDir } from "../../client-helper/test/fixtures";
import { BIN, ensureBuilt, SYSTEM_NODE } from "../../client-helper/test/support";
import { agentClis, agentEnv } from "../support/agent-clis.ts";
import { failUnderCi, skipLocally, skippedBecause } from "../support/prerequisites.ts";

const ROOT = resolve(import.meta.dirname, "../..");
const DOCS = [
  "README.md",
  "client-helper/README.md",
  ...readdirSync(join(ROOT, "docs"))
    .filter((name) => name.endsWith(".md"))
    .map((name) => `docs/${name}`),
];

/** One command the docs show, where it is. */
type Shown = { file: string; line: number; words: string[]; text: string };

/** Shell words of a line: quotes and backslashes as sh reads them; a word starting with # ends the line. */
function shellWords(line: string): string[] {
  const words: string[] = [];
  let word: string | null = null;
  for (let i = 0; i < line.length; i++) {
    const c = line[i] as string;
    if (c === "'" || c === '"') {
      const end = line.indexOf(c, i + 1);
      word = (word ?? "") + line.slice(i + 1, end < 0 ? line.length : end);
      i = end < 0 ? line.length : end;
    } else if (c === "\\" && i + 1 < line.length) {
      word = (word ?? "") + line[++i];
    } else if (/\s/.test(c)) {
      if (word !== null) words.push(word);
      word = null;
    } else if (c === "#" && word === null) {
      break;
    } else word = (word ?? "") + c;
  }
  if (word !== null) words.push(word);
  return words;
}

/** The simple commands of a shell line: split at &&, ||, ;, | with redirections and their targets left out. */
function simpleCommands(words: string[]): string[][] {
  const commands: string[][] = [[]];
  for (let i = 0; i < words.length; i++) {
    const word = words[i] as string;
    if (["&&", "||", ";", "|"].includes(word)) commands.push([]);
    else if ([">", "<", ">>", "2>"].includes(word)) i++;
    else commands[commands.length - 1]?.push(word);
  }
  return commands.filter((command) => command.length > 0);
}

/** Every command of the docs' shell blocks, and the `waymark …` lines of their plain blocks. */
function shownCommands(): Shown[] {
  const shown: Shown[] = [];
  for (const file of DOCS) {
    const lines = readFileSync(join(ROOT, file), "utf8").split("\n");
    let fence: string | null = null;
    for (let n = 0; n < lines.length; n++) {
      const line = lines[n] as string;
      const opened = /^```(\w*)\s*$/.exec(line);
      if (fence === null && opened) {
        fence = opened[1] ?? "";
        continue;
      }
      if (fence !== null && line.startsWith("```")) {
        fence = null;
        continue;
      }
      const shell = fence !== null && ["sh", "bash", "shell"].includes(fence);
      const usage = fence === "" && /^waymark \w/.test(line);
      if (!shell && !usage) continue;
      // A line continued with a backslash, and (usage) a synopsis continued on indented lines.
      let text = line;
      while (text.endsWith("\\") && n + 1 < lines.length) text = `${text.slice(0, -1)} ${lines[++n]}`;
      while (usage && /^\s+\[/.test(lines[n + 1] ?? "")) text = `${text} ${lines[++n]}`;
      // A usage synopsis: its optional parts are flags to check; `|` inside brackets is "or", not a pipe.
      if (usage)
        shown.push({ file, line: n + 1, words: [...text.split(/\s+/).slice(0, 2), ...(text.match(/--[a-z][a-z-]*/g) ?? [])], text });
      else for (const command of simpleCommands(shellWords(text))) shown.push({ file, line: n + 1, words: command, text });
    }
  }
  return shown;
}

const isPlaceholder = (word: string) => /[<>…]/.test(word);
const flagsOf = (words: readonly string[]) => words.filter((word) => /^--[a-z]/.test(word)).map((word) => word.replace(/=.*$/, ""));

/** The helper's commands and, for each, the flags its --help names. */
const helperHelp = new Map<string, string>();
function helperKnows(args: string[]): string | null {
  const [command, ...rest] = args;
  if (command === undefined) return "no waymark command";
  if (!helperHelp.has(command)) {
    const help = spawnSync(SYSTEM_NODE, [BIN, command, "--help"], { encoding: "utf8" });
    helperHelp.set(command, help.status === 0 ? help.stdout : "");
  }
  const help = helperHelp.get(command) ?? "";
  if (help === "") return `waymark ${command}: no such command (waymark ${command} --help fails)`;
  const unknown = flagsOf(rest).filter((flag) => !new RegExp(`${flag}\\b`).test(help));
  return unknown.length === 0 ? null : `waymark ${command}: ${unknown.join(", ")} not in its --help`;
}

const SCRIPTS = (JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as { scripts: Record<string, string> }).scripts;
const BINARIES = new Set(readdirSync(join(ROOT, "node_modules", ".bin")));

function run(command: string, args: string[]): { status: number | null; out: string } {
  const result = spawnSync(command, args, { cwd: ROOT, encoding: "utf8", timeout: 60_000, env: { ...process.env, NO_COLOR: "1" } });
  return { status: result.status, out: `${result.stdout}${result.stderr}` };
}

const wranglerHelp = new Map<string, string>();
function wranglerKnows(args: string[]): string | null {
  const path = args.filter((word) => !word.startsWith("-") && !isPlaceholder(word) && !/^[A-Z_]+$/.test(word)).slice(0, 2);
  const key = path.join(" ");
  if (!wranglerHelp.has(key)) {
    const help = run("npx", ["wrangler", ...path, "--help"]);
    wranglerHelp.set(key, help.status === 0 ? help.out : "");
  }
  const help = wranglerHelp.get(key) ?? "";
  if (help === "") return `wrangler ${key}: no such command`;
  const unknown = flagsOf(args).filter((flag) => !help.includes(flag));
  return unknown.length === 0 ? null : `wrangler ${key}: ${unknown.join(", ")} not in its --help`;
}

/** What is wrong with one shown command that needs no agent CLI; null when it names real things; "agent" for claude/codex. */
function problem(words: string[]): string | null | "agent" {
  const [program, ...args] = words;
  if (program === undefined) return "empty";
  if (program === "export") return /^[A-Z_]+=/.test(args[0] ?? "") ? null : `export: ${args[0]} is not NAME=value`;
  if (program === "waymark") return helperKnows(args);
  if (program === "claude" || program === "codex") {
    // The command `claude mcp add … -- <command>` registers must name real things too.
    const after = args.indexOf("--");
    return after < 0 ? "agent" : (problem(args.slice(after + 1)) ?? "agent");
  }
  if (program === "npm") {
    const [verb, ...rest] = args;
    if (verb === "install" || verb === "test") return null;
    if (verb === "start") {
      const after = rest.indexOf("--");
      return after < 0 ? null : wranglerKnows(["dev", ...rest.slice(after + 1)]);
    }
    if (verb === "run") {
      const [script, ...more] = rest.filter((word) => word !== "-s");
      if (!script || !(script in SCRIPTS)) return `npm run ${script}: no such script in package.json`;
      const after = more.indexOf("--");
      if (after < 0) return null;
      // The flags go to the script's own file (`node bench/run.ts`): it must read each.
      const file = /\b(?:node|sh)\s+(\S+\.(?:ts|mjs|js|sh))/.exec(SCRIPTS[script] ?? "")?.[1];
      const source = file ? readFileSync(join(ROOT, file), "utf8") : "";
      const unknown = flagsOf(more.slice(after + 1)).filter((flag) => !source.includes(flag.slice(2)));
      return unknown.length === 0 ? null : `npm run ${script} -- ${unknown.join(", ")}: not read by ${file}`;
    }
    return `npm ${verb}: not a command the docs should show`;
  }
  if (program === "npx") {
    const rest = args.filter((word) => word !== "-y" && !word.startsWith("--package="));
    const [tool, ...more] = rest;
    if (tool === "waymark")
      return args.some((word) => word.startsWith("--package=")) ? helperKnows(more) : "npx waymark: needs --package=<endpoint>/helper/…";
    if (!tool || !BINARIES.has(tool)) return `npx ${tool}: not a binary of node_modules/.bin`;
    if (tool === "node") return existsSync(join(ROOT, more[0] ?? "")) ? null : `npx node ${more[0]}: no such file`;
    if (tool === "wrangler") return wranglerKnows(more);
    if (tool === "vitest")
      return more.filter((word) => word.endsWith(".ts")).every((path) => existsSync(join(ROOT, path))) ? null : "vitest: no such file";
    return null;
  }
  return run("sh", ["-c", `command -v ${program}`]).status === 0 ? null : `${program}: not on PATH`;
}

/** An agent CLI's --help for a subcommand path (memoised); "" when that path is not a command of it. */
const agentHelp = new Map<string, string>();

beforeAll(() => ensureBuilt());
afterAll(cleanupTempDirs);

const SHOWN = shownCommands();

describe("every command the docs show names a real script, command and flags", () => {
  it("finds the commands (the shell blocks are read)", () => {
    expect(SHOWN.length).toBeGreaterThan(40);
    expect(SHOWN.some((shown) => shown.file === "README.md" && shown.words.join(" ") === "npm test")).toBe(true);
  });

  it("npm scripts, waymark commands and flags, npx tools, programs", () => {
    const wrong = SHOWN.flatMap((shown) => {
      const found = problem(shown.words);
      return found === null || found === "agent" ? [] : [`${shown.file}:${shown.line}: ${found}\n    ${shown.text.trim()}`];
    });
    expect(wrong).toEqual([]);
  }, 300_000);

  const clis = agentClis();
  const reason = clis.claude.skip ?? clis.codex.skip ?? null;
  it.skipIf(skipLocally(reason))(
    `claude and codex subcommands and flags, asked of the pinned CLIs${skippedBecause(reason)}`,
    () => {
      failUnderCi(reason, "the real agent CLIs");
      const home = tempDir("waymark-doc-commands-");
      const wrong: string[] = [];
      for (const shown of SHOWN) {
        const [program, ...args] = shown.words;
        if (program !== "claude" && program !== "codex") continue;
        const cli = program === "claude" ? clis.claude.cli : clis.codex.cli;
        if (!cli) continue;
        // The subcommand path: the words before the first flag or argument (at most three: `plugin marketplace add`).
        const path: string[] = [];
        for (const word of args) {
          if (word.startsWith("-") || isPlaceholder(word) || /[/:@.=]/.test(word) || path.length === 3) break;
          path.push(word);
        }
        while (path.length > 0) {
          const key = `${program} ${path.join(" ")}`;
          if (!agentHelp.has(key)) {
            const help = spawnSync(cli.command, [...cli.args, ...path, "--help"], {
              encoding: "utf8",
              timeout: 60_000,
              env: agentEnv(home),
            });
            agentHelp.set(
              key,
              help.status === 0 && !/unknown command|unrecognized subcommand/i.test(help.stdout + help.stderr) ? help.stdout : "",
            );
          }
          if (agentHelp.get(key)) break;
          path.pop();
        }
        const help = agentHelp.get(`${program} ${path.join(" ")}`) ?? "";
        if (path.length === 0 || help === "") {
          wrong.push(`${shown.file}:${shown.line}: ${program} ${args[0]}: not a command of ${program}`);
          continue;
        }
        // After `--` the words are the command the CLI is told to run (`claude mcp add … -- npx …`), checked as any command is.
        const own = args.includes("--") ? args.slice(0, args.indexOf("--")) : args;
        const unknown = flagsOf(own).filter((flag) => !help.includes(flag));
        if (unknown.length > 0)
          wrong.push(`${shown.file}:${shown.line}: ${program} ${path.join(" ")}: ${unknown.join(", ")} not in its --help`);
      }
      expect(wrong).toEqual([]);
    },
    300_000,
  );
});
