/**
 * @module command-kind
 * What kind of check a shell command runs (tests, a build, a linter, a type-checker), so the
 * record can put "observed: `npm test` exit 0 after the last edit" next to an agent's claim that
 * the tests pass. Only the command line is read, never its output. A compound command
 * (`npm run lint && npm test`) is each of its kinds; wrappers (`npx`, `pnpm exec`, `uv run`,
 * env assignments, `cd dir &&`) are looked through. Users add their own runners by first words.
 */

export type CommandKind = "test" | "build" | "lint" | "typecheck";
export const COMMAND_KINDS: readonly CommandKind[] = ["test", "build", "lint", "typecheck"];

/** Extra runners: for each kind, command prefixes (whole words) that mean it, e.g. `{test: ["./run-tests"]}`. */
export type CommandKindRules = Partial<Record<CommandKind, readonly string[]>>;

/** Script names of package managers' `run` (and yarn/pnpm/bun shorthands) mapped to kinds. */
function scriptKind(script: string): CommandKind | null {
  const name = script.toLowerCase();
  if (/^(?:test|tests|spec|e2e|check:test)(?:[:_-].*)?$/.test(name) || /^(?:unit|integration)(?:[:_-].*)?$/.test(name)) return "test";
  if (/^(?:typecheck|type-check|types|tsc|check-types|check:types)(?:[:_-].*)?$/.test(name)) return "typecheck";
  if (/^(?:lint|eslint|biome|format:check|fmt:check|check:lint)(?:[:_-].*)?$/.test(name)) return "lint";
  if (/^(?:build|compile|bundle|dist)(?:[:_-].*)?$/.test(name)) return "build";
  return null;
}

/** First words (after wrappers) that name a tool, and the kind the tool runs. */
const TOOLS: ReadonlyArray<readonly [RegExp, CommandKind]> = [
  [
    /^(?:vitest|jest|mocha|ava|tap|jasmine|karma|cypress run|playwright test|pytest|py\.test|nose2|tox|nox|rspec|phpunit|pest|ctest|bats)\b/,
    "test",
  ],
  [
    /^(?:go test|cargo test|cargo nextest|mvn(?:w)? (?:\S+ )*(?:test|verify)|(?:\.\/)?gradlew? (?:\S+ )*(?:test|check)|dotnet test|swift test|mix test|deno test|bun test|zig build test|sbt test|lein test|stack test|cabal test|flutter test|dart test|rake test|rails test|python3? -m (?:pytest|unittest)|node --test|make (?:test|check)|just test)\b/,
    "test",
  ],
  [/^(?:tsc|vue-tsc|svelte-check|mypy|pyright|basedpyright|pytype|flow check|python3? -m mypy|cargo check|go vet)\b/, "typecheck"],
  [
    /^(?:eslint|biome (?:check|lint|ci)|oxlint|ruff(?: check)?|flake8|pylint|black --check|prettier (?:\S+ )*--check|stylelint|rubocop|golangci-lint|staticcheck|cargo clippy|cargo fmt --check|clippy|shellcheck|hadolint|ktlint|swiftlint|markdownlint|standard)\b/,
    "lint",
  ],
  [
    /^(?:vite build|webpack|rollup|esbuild|tsup|parcel build|next build|nuxt build|astro build|go build|cargo build|mvn(?:w)? (?:\S+ )*(?:package|install|compile)|(?:\.\/)?gradlew? (?:\S+ )*(?:build|assemble)|dotnet build|swift build|make|cmake --build|ninja|bazel build|zig build|docker build|gcc|g\+\+|clang)\b/,
    "build",
  ],
];

/** Words that run the rest of the line: looked through to find the real command. */
const WRAPPER =
  /^(?:sudo|time|nice|nohup|env|exec|command|npx(?: -y| --yes)?|bunx|pnpx|pnpm (?:exec|dlx)|yarn (?:exec|dlx)|npm exec(?: --)?|uv run|poetry run|pipenv run|hatch run|pdm run|bundle exec|dotenv(?: --)?|cross-env|timeout \d+[smh]?)\s+/;
const ENV_ASSIGNMENT = /^[A-Za-z_][A-Za-z0-9_]*=(?:"[^"]*"|'[^']*'|\S*)\s+/;

function unwrap(segment: string): string {
  let s = segment.trim();
  for (let i = 0; i < 16; i++) {
    const next = s
      .replace(ENV_ASSIGNMENT, "")
      .replace(WRAPPER, "")
      .replace(/^\(\s*/, "");
    if (next === s) break;
    s = next;
  }
  return s;
}

function segmentKind(segment: string, rules: CommandKindRules): CommandKind | null {
  const command = unwrap(segment);
  if (command === "") return null;
  for (const kind of COMMAND_KINDS) {
    for (const prefix of rules[kind] ?? []) {
      if (command === prefix || command.startsWith(`${prefix} `)) return kind;
    }
  }
  // npm test / npm run <script> / yarn <script> / pnpm <script> / bun run <script>
  const manager =
    /^(?:npm|pnpm|yarn|bun)(?:\s+(?:-[-\w=]+|--(?:workspace|filter|prefix|dir)\s+\S+))*\s+(?:run(?:-script)?\s+|-w\s+\S+\s+)?([\w:.-]+)/.exec(
      command,
    );
  if (manager?.[1]) {
    if (manager[1] === "t" || manager[1] === "test") return "test";
    const kind = scriptKind(manager[1]);
    if (kind) return kind;
  }
  for (const [pattern, kind] of TOOLS) if (pattern.test(command)) return kind;
  return null;
}

/**
 * The kinds a command line runs, in the order they appear, each once. Segments are split on
 * `&&`, `||`, `;`, `|` and newlines (outside quotes is not tracked: a quoted `&&` only adds a
 * segment that matches nothing, or rarely a kind, never hides one).
 */
export function commandKinds(commandLine: string, rules: CommandKindRules = {}): CommandKind[] {
  const kinds: CommandKind[] = [];
  for (const segment of commandLine.slice(0, 8192).split(/&&|\|\||[;|\n]/)) {
    const kind = segmentKind(segment, rules);
    if (kind && !kinds.includes(kind)) kinds.push(kind);
  }
  return kinds;
}
