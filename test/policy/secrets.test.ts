// The secret guard as a table: what a brief may carry and what it may not. Every fake credential
// below is built from a fixed alphabet walk, so the file holds no real one; each is as random-looking
// as the real format (the guard must not rely on a value being unrealistic).
import { beforeAll, describe, expect, test } from "bun:test"
import { type Finished, finishes } from "../helpers/finishes"
import { findSecrets, isPlaceholder, MIN_ENTROPY, MIN_SECRET_LENGTH, shannonEntropy } from "../../src/policy/secrets"

const walk = (length: number, alphabet = "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8s9T0uVwXyZ") =>
  Array.from({ length }, (_, i) => alphabet[(i * 7) % alphabet.length]).join("")
const pemBody = Array.from({ length: 4 }, () =>
  walk(64, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"),
).join("\n")

const secrets: [string, string, string][] = [
  // [what, brief, kind at line:column]
  [
    "an RSA private key block",
    `Deploy with this key:\n-----BEGIN RSA PRIVATE KEY-----\n${pemBody}\n-----END RSA PRIVATE KEY-----\n`,
    "private key 2:1",
  ],
  [
    "an OpenSSH private key block",
    `-----BEGIN OPENSSH PRIVATE KEY-----\n${pemBody}\n-----END OPENSSH PRIVATE KEY-----`,
    "private key 1:1",
  ],
  ["a classic GitHub token in prose", `Push with ghp_${walk(36)} please`, "GitHub token 1:11"],
  ["a GitHub OAuth token", `gho_${walk(36)}`, "GitHub token 1:1"],
  ["a GitHub server token", `x ghs_${walk(36)}`, "GitHub token 1:3"],
  ["a fine-grained GitHub token", `github_pat_${walk(22)}_${walk(59)}`, "GitHub token 1:1"],
  ["an AWS access key id", "aws configure set aws_access_key_id AKIA2E0A8F3B244C9986", "AWS access key id 1:37"],
  [
    "a Slack bot token",
    `curl -H "Authorization: Bearer xoxb-${walk(12, "0123456789")}-${walk(24)}"`,
    "Slack token 1:32",
  ],
  ["an OpenAI key", `OPENAI=sk-${walk(48)}`, "OpenAI API key 1:8"],
  [
    "an OpenAI project key",
    `use sk-proj-${walk(60, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-")}`,
    "OpenAI API key 1:5",
  ],
  ["an Anthropic key", `key sk-ant-api03-${walk(80)}`, "Anthropic API key 1:5"],
  ["a Google API key", `maps?key=AIza${walk(35)}&q=1`, "Google API key 1:10"],
  ["a JWT", `Cookie: session=eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NSJ9.${walk(43)}`, "JWT 1:17"],
  [
    "a password assignment in an env file",
    "DB_HOST=localhost\nDB_PASSWORD=Xk9#mQ2$vL7pR4wz\n",
    "high-entropy value assigned to DB_PASSWORD 2:13",
  ],
  ["a quoted api_key in JSON", `{"api_key": "${walk(32)}"}`, "high-entropy value assigned to api_key 1:14"],
  ["a token= query parameter", `GET /hook?token=${walk(24)}`, "high-entropy value assigned to token 1:17"],
  ["a passwd: in YAML", `user: app\npasswd: ${walk(16)}`, "high-entropy value assigned to passwd 2:9"],
  [
    "a secret= in a shell line",
    `export CLIENT_SECRET=${walk(40)}`,
    "high-entropy value assigned to CLIENT_SECRET 1:22",
  ],
  [
    "a sha256 digest assigned to a token name",
    `token=${"9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"}`,
    "high-entropy value assigned to token 1:7",
  ],
  [
    "a UUID assigned to an api key (some APIs use them as keys)",
    `apiKey: "550e8400-e29b-41d4-a716-446655440000"`,
    "high-entropy value assigned to apiKey 1:10",
  ],
]

const clean: [string, string][] = [
  [
    "ordinary TypeScript",
    'const token = await getToken()\nif (password !== confirm) throw new Error("mismatch")\nconst max_tokens = 4096',
  ],
  ["a type annotation", "interface Login { password: string; apiKey?: string; token: Token }"],
  ["a zod schema", 'token: z.string().min(1).describe("the token")'],
  ["an arrow function", "tokens.map((token) => token.trim())"],
  ["code references, unquoted", "const options = { secret: config.sessionSecret, token: authToken }"],
  [
    "a sha256 digest in prose",
    "The tarball's sha256 is 9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08; check it.",
  ],
  ["a commit id", "Revert 5ac971b2f0a3c9d8e7f6a5b4c3d2e1f0a9b8c7d6 and rerun."],
  ["a bare UUID", "request 550e8400-e29b-41d4-a716-446655440000 failed"],
  ["base64 of a short word under a secret name", "secret=aGVsbG8="],
  ["a short test password", 'login("alice", { password: "hunter2" })'],
  ["a random value under the minimum length", "token=aB3$xY9q"],
  ["a long value with little entropy", "password=abababababababab"],
  ["angle-bracket placeholder", "API_KEY=<your-api-key>"],
  ["xxx placeholder", "GITHUB_TOKEN=xxxxxxxxxxxxxxxxxxxx"],
  ["changeme", "password: changeme"],
  ["a shell variable", "TOKEN=${GITHUB_TOKEN} ./deploy.sh"],
  ["a GitHub Actions secret", "token: ${{ secrets.NPM_TOKEN }}"],
  ["process.env", "const apiKey = process.env.OPENAI_API_KEY"],
  ["a template GitHub token", "Tokens look like ghp_xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"],
  ["AWS's documented example key", "aws_access_key_id = AKIAIOSFODNN7EXAMPLE"],
  [
    "a private key header without a key",
    "Reject files that start with -----BEGIN RSA PRIVATE KEY----- in the upload handler.",
  ],
  ["kebab-case after sk-", "pip install sk-learn-compatible-pipeline-tools"],
  ["a secret-sounding name that does not end in the word", "secret_name=production-database-credentials-v2"],
  ["a path", "token_file: /run/secrets/token and PWD=/home/user/projects/app"],
]

describe("the secret guard refuses", () => {
  test.each(secrets)("%s", (_, brief, expected) => {
    const findings = findSecrets(brief)
    expect(findings.map((f) => `${f.kind} ${f.line}:${f.column}`)).toEqual([expected])
  })

  test("never echoes the value: a finding holds a kind and a position only", () => {
    const token = `ghp_${walk(36)}`
    const [finding] = findSecrets(`use ${token}`)
    expect(Object.keys(finding!).sort()).toEqual(["column", "kind", "line"])
    expect(JSON.stringify(finding)).not.toContain(token.slice(4))
  })

  test("reports every secret in a brief, in order", () => {
    const brief = `AKIA2E0A8F3B244C9986\nthen ghp_${walk(36)}`
    expect(findSecrets(brief).map((f) => `${f.kind} ${f.line}:${f.column}`)).toEqual([
      "AWS access key id 1:1",
      "GitHub token 2:6",
    ])
  })
})

describe("the secret guard lets through", () => {
  test.each(clean)("%s", (_, brief) => {
    expect(findSecrets(brief)).toEqual([])
  })
})

describe("cost", () => {
  // The guard reads every brief before the size cap applies, and the MCP gate lets ~10 MiB through.
  // Each megabyte is scanned in a process of its own (a linear scan takes milliseconds, a quadratic
  // pattern minutes); the deadline only stops the wait, the test asserts that every scan got to its end.
  const units: string[] = [
    ...[
      "sk-",
      "ghp_",
      "xoxb-",
      "a_",
      "password=",
      "eyJaaaaaaaaaaaa.",
      "--token ",
      'token: "',
      "Authorization: ",
      "Bearer 1",
    ],
    // The contexts and the normalised view: URLs, curl -u, .netrc, escapes, invisible and fullwidth characters.
    ...[
      "a://b:c@",
      "x://a:",
      "curl -u a:",
      "machine a ",
      "-----BEGIN PRIVATE KEY----- ",
      "\\",
      "\\u200b",
      "\u200b",
      "\uff47hp_",
    ],
    ...[
      "mysql -u ",
      "sshpass -p ",
      "Server=a;Password=",
      "<password>",
      '<add key="token" value="',
      "\\x6",
      "e\u0301",
      " => ",
      "\ufdfa",
    ],
    ...[
      "docker login ",
      "docker login -p",
      "secret set a ",
      "--from-literal=a=",
      "-pass pass:",
      "LS0tLS1CRUdJTi",
      "curl -u a:b;",
    ],
    ...[
      "- name: a_token\n  value: ",
      '"token", ',
      'name="token" ',
      'env["token"] = ',
      '-----BEGIN PRIVATE KEY-----" + "',
    ],
  ]
  const scan = (more: string[] = []) =>
    finishes(
      [
        "-e",
        `import { findSecrets } from ${JSON.stringify(`${import.meta.dir}/../../src/policy/secrets`)}
        for (const unit of ${JSON.stringify([...more, ...units])}) {
          console.log("try " + JSON.stringify(unit))
          findSecrets(unit.repeat(Math.ceil(1_048_576 / unit.length)))
          console.log("ok " + JSON.stringify(unit))
        }`,
      ],
      120_000,
    )
  let scanned: Finished
  beforeAll(async () => {
    scanned = await scan()
  }, 130_000)
  test.each(units)("a megabyte of %p is scanned to its end", (unit) => {
    expect(scanned.stdout.split("\n")).toContain(`ok ${JSON.stringify(unit)}`)
  })
  test("control: a megabyte the guard's patterns cannot get through stops the scan there", async () => {
    const slow = await finishes(["-e", `/a*b/.test("a".repeat(1_048_576)); console.log("ok")`], 10_000)
    expect(slow).toMatchObject({ finished: false, stdout: "" })
  }, 30_000)
})

describe("the thresholds", () => {
  test("entropy: repeats score 0, a random 16-character value scores above the threshold, a word below", () => {
    expect(shannonEntropy("aaaaaaaaaaaa")).toBe(0)
    expect(shannonEntropy(walk(16))).toBeGreaterThanOrEqual(MIN_ENTROPY)
    expect(shannonEntropy("mississippi")).toBeLessThan(MIN_ENTROPY)
    expect(MIN_SECRET_LENGTH).toBe(12)
  })

  test.each([
    "<your-key>",
    "[token]",
    "xxx",
    "****",
    "changeme",
    "${VAR}",
    "$TOKEN",
    "%API_KEY%",
    "process.env.X",
    'os.environ["KEY"]',
    "getSecret()",
    "your_api_key_here",
    "REDACTED",
  ])("%s is a placeholder", (value) => {
    expect(isPlaceholder(value)).toBe(true)
  })
})
