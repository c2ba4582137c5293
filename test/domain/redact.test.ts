import { entropyPerChar, redact, redactDeep, SECRET_FORMATS } from "@waymark/protocol/redact";
import { describe, expect, it } from "vitest";

// Secrets are assembled at run time so that no scanner mistakes this file for a leak.
const join = (...parts: string[]) => parts.join("");
const AWS_ID = join("AKIA", "IOSFODNN7", "EXAMPLE");
const AWS_SECRET = join("wJalrXUtnFEMI/K7MDENG/", "bPxRfiCYEXAMPLEKEY");
const GITHUB = join("ghp_", "1a2B3c4D5e6F7g8H9i0J", "1k2L3m4N5o6P7q8R");
const GITHUB_PAT = join("github_pat_", "11ABCDEFG0123456789_", "abcdefghijklmnopqrstuvwxyz0123456789ABCDEFGHIJKLMNOPQRSTUVW");
const GITLAB = join("glpat-", "x1Y2z3A4b5C6d7E8f9G0");
const SLACK = join("xoxb-", "123456789012-1234567890123-", "AbCdEfGhIjKlMnOpQrStUvWx");
const SLACK_HOOK = join("https://hooks.slack.com/services/", "T00000000/B00000000/", "XXXXXXXXXXXXXXXXXXXXXXXX");
const STRIPE = join("sk_live_", "4eC39HqLyjWDarjtT1zdp7dc");
const ANTHROPIC = join("sk-ant-api03-", "AbCdEfGhIjKlMnOpQrStUvWxYz0123456789");
const OPENAI = join("sk-proj-", "AbCdEfGhIjKlMnOpQrStUvWxYz0123456789");
const GOOGLE = join("AIza", "SyA-1234567890abcdefghijklmnopqrstu");
const NPM = join("npm_", "abcdefghijklmnopqrstuvwxyz0123456789");
const PYPI = join("pypi-", "AgEIcHlwaS5vcmcCJGE0ZjY3YjQ2LWM4ZjMtNGEyYi1hZjFlLTk2ZTQwNjA3");
const WAYMARK = join("wmk_acme_", "abcdefgh234567ab_", "Zx9Qw8Er7Ty6Ui5Op4As3Df2");
const JWT = join("eyJhbGciOiJIUzI1NiJ9", ".", "eyJzdWIiOiIxMjM0NTY3ODkwIn0", ".", "dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U");
const PRIVATE_KEY = join(
  "-----BEGIN OPENSSH ",
  "PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\nQyNTUxOQAAACD\n-----END OPENSSH ",
  "PRIVATE KEY-----",
);
const RANDOM = "Q7m2Xk9Lp4Rz8Vt1Nb6Hc3Jd";

describe("redact: each format is removed and named", () => {
  it.each([
    ["AWS access key id", `aws configure set aws_access_key_id ${AWS_ID}`, "AWS access key id", AWS_ID],
    ["AWS secret access key", `export AWS_SECRET_ACCESS_KEY=${AWS_SECRET}`, "AWS secret access key", AWS_SECRET],
    ["GitHub token in a URL", `git clone https://x-access-token:${GITHUB}@github.com/o/r`, "GitHub token", GITHUB],
    ["GitHub token in a header", `curl -H "Authorization: token ${GITHUB}" api.github.com`, "GitHub token", GITHUB],
    ["fine-grained GitHub token", `GH_TOKEN=${GITHUB_PAT} gh pr list`, "GitHub token", GITHUB_PAT],
    ["GitLab token", `glab auth login --token ${GITLAB}`, "GitLab token", GITLAB],
    ["Slack token", `SLACK_BOT_TOKEN=${SLACK} node bot.js`, "Slack token", SLACK],
    ["Slack webhook", `curl -X POST ${SLACK_HOOK} -d '{}'`, "Slack webhook URL", SLACK_HOOK],
    ["Stripe key", `stripe --api-key ${STRIPE} charges list`, "Stripe key", STRIPE],
    ["Anthropic key", `ANTHROPIC_API_KEY=${ANTHROPIC} claude`, "Anthropic API key", ANTHROPIC],
    ["OpenAI key", `OPENAI_API_KEY=${OPENAI} python run.py`, "OpenAI API key", OPENAI],
    ["Google API key", `curl "https://maps.googleapis.com/x?key=${GOOGLE}"`, "Google API key", GOOGLE],
    ["npm token", `npm config set //registry.npmjs.org/:_authToken=${NPM}`, "npm token", NPM],
    ["PyPI token", `twine upload -p ${PYPI} dist/*`, "PyPI token", PYPI],
    ["Waymark token", `WAYMARK_TOKEN=${WAYMARK} npx waymark doctor`, "Waymark token", WAYMARK],
    ["JSON web token", `curl -H "Cookie: session=${JWT}" localhost`, "JSON web token", JWT],
    ["private key block", `cat > id_ed25519 <<EOF\n${PRIVATE_KEY}\nEOF`, "private key", "b3BlbnNzaC1rZXktdjEAAAAA"],
    ["password=", `mysql --password=hunter2-but-longer -u root`, "password", "hunter2-but-longer"],
    ["quoted password", `psql "host=db password='s3cr3t pass' user=app"`, "password", "s3cr3t pass"],
    ["PASSWORD: in YAML", `DB_PASSWORD: correct-horse`, "password", "correct-horse"],
    ["URL credentials", `git remote add o https://alice:${RANDOM}@git.example.com/r.git`, "URL credentials", RANDOM],
    ["bearer token", `curl -H "Authorization: Bearer ${RANDOM}" https://api.example.com`, "bearer token", RANDOM],
    ["high-entropy value after api_key", `deploy --api_key=${RANDOM}`, "secret value", RANDOM],
    ["high-entropy value after secret:", `client_secret: "${RANDOM}"`, "secret value", RANDOM],
    ["high-entropy value after TOKEN=", `export SERVICE_TOKEN=${RANDOM}`, "secret value", RANDOM],
  ])("%s", (_case, text, name, secret) => {
    const result = redact(text);
    expect(result.text).not.toContain(secret);
    expect(result.text).toContain(`[redacted: ${name}]`);
    expect(result.redactions.map((r) => r.name)).toContain(name);
  });
});

describe("redact: prose, paths and identifiers stay as they are", () => {
  it.each([
    "npm test",
    "the token is refreshed every hour; the secret rotates daily",
    "Use passwordless sign-in (no password field)",
    "vitest run test/auth/token-refresh.test.ts",
    "git log --format=%H -n 1 a1b2c3d4e5f6a7b8c9d0e1f2a3b4c5d6e7f8a9b0",
    "key=value and api_key=changeme-placeholder",
    "const tokenCount = countTokens(messages)",
    "Bearer tokens keep working on /mcp alongside OAuth",
    "sha256: 9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
    "see src/keys/rotation-policy/ReadmeForOperators.md",
  ])("%s", (text) => {
    expect(redact(text)).toEqual({ text, redactions: [] });
  });
});

describe("redact", () => {
  it("removes only the secret: the text around it stays as written", () => {
    expect(redact(`git remote add o https://alice:${RANDOM}@git.example.com/r.git`).text).toBe(
      "git remote add o https://alice:[redacted: URL credentials]@git.example.com/r.git",
    );
    expect(redact(`mysql --password=hunter2-but-longer -u root`).text).toBe("mysql --password=[redacted: password] -u root");
    expect(redact(`export AWS_SECRET_ACCESS_KEY=${AWS_SECRET} && aws s3 ls`).text).toBe(
      "export AWS_SECRET_ACCESS_KEY=[redacted: AWS secret access key] && aws s3 ls",
    );
  });

  it("names each secret of a text once, and a redacted text is left alone the second time", () => {
    const once = redact(`A=${GITHUB} B=${STRIPE} C=${AWS_ID}`);
    expect(once.redactions.map((r) => r.name).sort()).toEqual(["AWS access key id", "GitHub token", "Stripe key"]);
    expect(redact(once.text)).toEqual({ text: once.text, redactions: [] });
  });

  it("redacts every string of a tool's arguments, keys untouched", () => {
    const { value, redactions } = redactDeep({
      question: "Which key?",
      options_considered: [`use ${STRIPE}`, "env var"],
      metadata: { env: { STRIPE_KEY: STRIPE } },
    });
    expect(JSON.stringify(value)).not.toContain(STRIPE);
    expect(value.metadata.env).toHaveProperty("STRIPE_KEY");
    expect(redactions).toHaveLength(2);
  });

  it("stays linear on hostile input (a long run of near-matches)", () => {
    const hostile = `${"key=".repeat(20_000)}${"a".repeat(100_000)} ${"-----BEGIN RSA PRIVATE KEY-----".repeat(500)}`;
    const started = performance.now();
    redact(hostile);
    // Generous bound: a backtracking pattern takes minutes here, a linear one milliseconds.
    expect(performance.now() - started).toBeLessThan(10_000);
  });

  it("walks a value nested 50,000 deep without exhausting the stack (the endpoint refuses such nesting by name)", () => {
    const deep = JSON.parse(`${"[".repeat(50_000)}"${GITHUB}"${"]".repeat(50_000)}`) as unknown;
    expect(() => redactDeep({ metadata: deep })).not.toThrow();
    const shallow = redactDeep({ metadata: { a: [[`token ${GITHUB}`]] } });
    expect(JSON.stringify(shallow.value)).not.toContain(GITHUB);
  });

  it("scores random tokens above words", () => {
    expect(entropyPerChar(RANDOM)).toBeGreaterThan(3.5);
    expect(entropyPerChar("placeholderplaceholder")).toBeLessThan(3.5);
  });

  it("every format has a name and a global pattern", () => {
    for (const format of SECRET_FORMATS) {
      expect(format.name).not.toBe("");
      expect(format.pattern.global).toBe(true);
    }
  });
});
