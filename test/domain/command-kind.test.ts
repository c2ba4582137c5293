import { commandKinds } from "@waymark/protocol/command-kind";
import { describe, expect, it } from "vitest";

describe("commandKinds: what a shell command line runs", () => {
  it.each([
    ["npm test", ["test"]],
    ["npm t", ["test"]],
    ["npm run test:unit -- --reporter dot", ["test"]],
    ["pnpm -r test", ["test"]],
    ["yarn test --watch=false", ["test"]],
    ["bun test", ["test"]],
    ["npx vitest run test/auth", ["test"]],
    ["CI=true npx -y vitest run", ["test"]],
    ["cd packages/api && npm test", ["test"]],
    ["jest --coverage", ["test"]],
    ["pytest -q tests/", ["test"]],
    ["python -m pytest -x", ["test"]],
    ["uv run pytest", ["test"]],
    ["poetry run pytest tests/unit", ["test"]],
    ["go test ./...", ["test"]],
    ["cargo test --workspace", ["test"]],
    ["mvn -q test", ["test"]],
    ["./gradlew test", ["test"]],
    ["dotnet test", ["test"]],
    ["bundle exec rspec spec/models", ["test"]],
    ["make test", ["test"]],
    ["node --test", ["test"]],
    ["tsc --noEmit", ["typecheck"]],
    ["npx tsc -p tsconfig.json", ["typecheck"]],
    ["npm run typecheck", ["typecheck"]],
    ["mypy src", ["typecheck"]],
    ["pyright", ["typecheck"]],
    ["cargo check", ["typecheck"]],
    ["eslint .", ["lint"]],
    ["npx biome check --write src", ["lint"]],
    ["npm run lint", ["lint"]],
    ["ruff check .", ["lint"]],
    ["golangci-lint run", ["lint"]],
    ["cargo clippy -- -D warnings", ["lint"]],
    ["prettier --check .", ["lint"]],
    ["npm run build", ["build"]],
    ["vite build", ["build"]],
    ["go build ./cmd/server", ["build"]],
    ["cargo build --release", ["build"]],
    ["make", ["build"]],
    ["npm run lint && npm run typecheck && npm test", ["lint", "typecheck", "test"]],
    ["npm test 2>&1 | tail -20", ["test"]],
    ["git status", []],
    ["ls -la; cat package.json", []],
    ["echo npm test", []],
    ["grep -rn test src", []],
    ["npm install", []],
    ["npm run dev", []],
    ["rm -rf dist", []],
  ])("%s → %j", (command, kinds) => {
    expect(commandKinds(command)).toEqual(kinds);
  });

  it("takes the user's own runners by first words", () => {
    expect(commandKinds("./scripts/check-all --fast", { test: ["./scripts/check-all"] })).toEqual(["test"]);
    expect(commandKinds("./scripts/check-allx", { test: ["./scripts/check-all"] })).toEqual([]);
  });

  it("reads a bounded prefix of a huge command line", () => {
    expect(commandKinds(`${"echo x; ".repeat(100_000)}npm test`)).toEqual([]);
  });
});
