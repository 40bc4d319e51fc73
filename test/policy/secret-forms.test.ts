// The secret guard against the forms credentials take in real briefs (issue 18, class 8): escaped,
// flattened, wrapped, split by invisible characters, or known only by where they stand; and the
// false-positive corpus that must keep passing. Every fake credential is a fixed alphabet walk, as
// random-looking as the real format, so the file holds no real one.
import { describe, expect, test } from "bun:test"
import { normalise } from "../../src/policy/normalise"
import { findSecrets } from "../../src/policy/secrets"

const walk = (length: number, alphabet = "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8s9T0uVwXyZ") =>
  Array.from({ length }, (_, i) => alphabet[(i * 7) % alphabet.length]).join("")
const B64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
const pemBody = Array.from({ length: 4 }, (_, i) => walk(64 - i, B64)).join("\n")
const ghp = `ghp_${walk(36)}`
const serviceAccount = JSON.stringify({
  type: "service_account",
  project_id: "demo",
  private_key_id: walk(40, "0123456789abcdef"),
  private_key: `-----BEGIN PRIVATE KEY-----\n${pemBody}\u003d\n-----END PRIVATE KEY-----\n`,
  client_email: "deploy@demo.iam.gserviceaccount.com",
}).replace("=", "\\u003d")
const at = (haystack: string, needle: string) => haystack.indexOf(needle) + 1
const findings = (brief: string) => findSecrets(brief).map((f) => `${f.kind} ${f.line}:${f.column}`)

const refused: [string, string, string][] = [
  // [what, brief, kind at line:column in the text as written]
  [
    "a service-account JSON with \\n escapes",
    `Use this:\n${serviceAccount}`,
    `private key 2:${at(serviceAccount, "-----BEGIN")}`,
  ],
  [
    "the same JSON escaped once more",
    `creds=${JSON.stringify(serviceAccount)}`,
    `private key 1:${at(JSON.stringify(serviceAccount), "-----BEGIN") + 6}`,
  ],
  [
    "a PEM block flattened to one line",
    `key: -----BEGIN RSA PRIVATE KEY----- ${pemBody.replaceAll("\n", " ")} -----END RSA PRIVATE KEY-----`,
    "private key 1:6",
  ],
  [
    "an encrypted PEM block",
    `-----BEGIN RSA PRIVATE KEY-----\nProc-Type: 4,ENCRYPTED\nDEK-Info: AES-128-CBC,0A1B\n\n${pemBody}`,
    "private key 1:1",
  ],
  [
    "postgres://user:pass@host",
    "Run the migration against postgres://app:pass@db.internal:5432/orders",
    "password in a URL 1:42",
  ],
  [
    "any scheme's userinfo password",
    `MONGO=mongodb+srv://svc:${walk(16)}@cluster0.mongodb.net/app`,
    "password in a URL 1:25",
  ],
  ["a password with no user", "redis://:s3cr3t@cache:6379/0", "password in a URL 1:10"],
  [
    "Authorization: Bearer",
    `curl -H "Authorization: Bearer ${walk(40, "abcdef0123456789")}" https://api`,
    "credential in an Authorization header 1:32",
  ],
  [
    "Authorization: Basic",
    `Authorization: Basic ${btoa("deploy:hunter22")}`,
    "credential in an Authorization header 1:22",
  ],
  ["a bare Bearer token", `send it as Bearer ${walk(32)}.`, "bearer token 1:19"],
  [
    "base64-wrapped basic auth without the header",
    `header value Basic ${btoa("ci-bot:pw-2024")}`,
    "basic-auth credentials (base64) 1:20",
  ],
  ["a Stripe live key", `STRIPE=sk_live_${walk(24)}`, "Stripe key 1:8"],
  ["a Stripe restricted key", `rk_live_${walk(24)}`, "Stripe key 1:1"],
  ["an npm token", `//registry.npmjs.org/:_authToken=npm_${walk(36)}`, "npm token 1:34"],
  ["a GitLab token", `git clone https://oauth2:glpat-${walk(20)}@gitlab.com/g/p.git`, "GitLab token 1:26"],
  [
    "a Slack webhook URL",
    `post to https://hooks.slack.com/services/T${walk(8, "ABCDEFGH0123456789")}/B${walk(10, "ABCDEFGH0123456789")}/${walk(24)}`,
    "Slack webhook URL 1:17",
  ],
  [
    "a Discord webhook URL",
    `https://discord.com/api/webhooks/123456789012345678/${walk(68, B64.slice(0, 62))}`,
    "Discord webhook URL 1:9",
  ],
  [
    "aws configure set aws_secret_access_key",
    `aws configure set aws_secret_access_key ${walk(40, B64)}`,
    "high-entropy value assigned to aws_secret_access_key 1:41",
  ],
  [
    "SECRET_KEY in quotes with a space",
    "SECRET_KEY='Xk9#mQ2$ vL7pR4wz'",
    "high-entropy value assigned to SECRET_KEY 1:13",
  ],
  ["a token split by a zero-width space", `push with ${ghp.slice(0, 20)}\u200b${ghp.slice(20)}`, "GitHub token 1:11"],
  ["a token split by a soft hyphen and a word joiner", `AKIA2E0A\u00ad8F3B\u2060244C9986`, "AWS access key id 1:1"],
  [
    "a token in fullwidth letters",
    `use ${[...ghp].map((c) => String.fromCodePoint(c.codePointAt(0)! + 0xfee0)).join("")}`,
    "GitHub token 1:5",
  ],
  [
    "JSON escaped inside a string",
    `"{\\"api_key\\": \\"${walk(32)}\\"}"`,
    "high-entropy value assigned to api_key 1:18",
  ],
  ["curl -u user:pass", `curl -u deploy:${walk(14)} https://x.test/upload`, "password in a -u/--user option 1:16"],
  ["curl --user=user:pass", `curl --user=ci:hunter2 https://x.test`, "password in a -u/--user option 1:16"],
  [
    "an X-Api-Key header",
    `curl -H 'X-Api-Key: ${walk(32)}' https://api`,
    "high-entropy value assigned to X-Api-Key 1:21",
  ],
  ["a .netrc line", `machine api.heroku.com login bot@ci.test password ${walk(20)}`, "password in a .netrc entry 1:51"],
  [
    "a .netrc entry on several lines",
    `machine git.corp.test\n  login bot\n  password hunter2`,
    "password in a .netrc entry 3:12",
  ],
  ["a --password= flag", `mysql --password=${walk(16)} -h db`, "high-entropy value assigned to --password 1:18"],
  ["a --token flag and a space", `gh auth login --token ${walk(20)}`, "high-entropy value assigned to --token 1:23"],
  [
    "npm config set _authToken",
    `npm config set //registry.npmjs.org/:_authToken ${walk(36, B64.slice(0, 62))}`,
    "high-entropy value assigned to _authToken 1:49",
  ],
  ["export FOO_TOKEN=", `export FOO_TOKEN=${walk(20)}`, "high-entropy value assigned to FOO_TOKEN 1:18"],
  ["a secret_key name", `secret_key = "${walk(24)}"`, "high-entropy value assigned to secret_key 1:15"],
  [
    "docker auth in config.json",
    `{"auths": {"ghcr.io": {"auth": "${btoa(`bot:${walk(12)}`)}"}}}`,
    "high-entropy value assigned to auth 1:33",
  ],
  [
    "a Hugging Face token",
    `hf_${walk(34, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ")}`,
    "Hugging Face token 1:1",
  ],
  ["a SendGrid key", `SG.${walk(22)}.${walk(43)}`, "SendGrid API key 1:1"],
  ["a Google OAuth client secret", `GOCSPX-${walk(28)}`, "Google OAuth client secret 1:1"],
  ["a Vault token", `VAULT=hvs.${walk(90)}`, "HashiCorp Vault token 1:7"],
  ["a token split by a combining mark", `${ghp.slice(0, 9)}\u0301${ghp.slice(9)}`, "GitHub token 1:1"],
  ["a token written with \\x escapes", `"\\x67hp_${walk(36)}"`, "GitHub token 1:2"],
  ["a Ruby or PHP hash rocket", `{ 'api_key' => '${walk(24)}' }`, "high-entropy value assigned to api_key 1:17"],
  [
    "an XML element",
    `<config><password>${walk(16)}</password></config>`,
    "high-entropy value assigned to password 1:19",
  ],
  [
    "a .NET appSettings entry",
    `<add key="ApiKey" value="${walk(24)}" />`,
    "high-entropy value assigned to ApiKey 1:26",
  ],
  [
    "mysql -p with the password glued on",
    "mysql -u root -phunter2 orders",
    "password in a command-line -p option 1:17",
  ],
  ["sshpass -p", "sshpass -p 'hunter2' ssh deploy@host", "password in a command-line -p option 1:13"],
  [
    "a connection string's password",
    "Server=db;Database=app;User Id=sa;Password=hunter2;",
    "password in a connection string 1:44",
  ],
  [
    "a kubeconfig's base64 client key",
    `client-key-data: ${btoa(`-----BEGIN RSA PRIVATE KEY-----\n${pemBody}`)}`,
    "private key (base64) 1:18",
  ],
  ["docker login -p", "docker login -u bot -p hunter2 ghcr.io", "password in a command-line -p option 1:24"],
  ["gh secret set --body", 'gh secret set DEPLOY_KEY --body "hunter2"', "value of gh secret set --body 1:34"],
  [
    "kubectl --from-literal",
    "kubectl create secret generic db --from-literal=password=hunter2",
    "value of a kubectl --from-literal secret 1:58",
  ],
  [
    "a PEM block joined from string literals",
    `const key = "-----BEGIN RSA PRIVATE KEY-----\\n" +\n  "${pemBody.split("\n")[0]}\\n"`,
    "private key 1:14",
  ],
  ["a subscripted assignment", `os.environ["API_KEY"] = "${walk(24)}"`, "high-entropy value assigned to API_KEY 1:26"],
  ["wp-config define()", `define( 'DB_PASSWORD', '${walk(16)}' );`, "high-entropy value assigned to DB_PASSWORD 1:25"],
  [
    "a header set in code",
    `req.setHeader("Authorization", "Bearer ${walk(32)}")`,
    "credential in an Authorization header 1:40",
  ],
  [
    "a Kubernetes env entry",
    `env:\n  - name: API_TOKEN\n    value: ${walk(24)}`,
    "high-entropy value assigned to API_TOKEN 3:12",
  ],
  [
    "an ECS environment entry",
    `{"name": "DB_PASSWORD", "value": "${walk(16)}"}`,
    "high-entropy value assigned to DB_PASSWORD 1:35",
  ],
  [
    "openssl -pass pass:",
    "openssl enc -aes-256-cbc -pass pass:hunter2 -in a",
    "password in a command-line -p option 1:32",
  ],
  ["a password given in prose", "Log in as root; the password is Sup3r-S3cret-2024.", "credential given in prose 1:33"],
  [
    "a token given for someone",
    `The token for the CI bot is ${walk(24)}, keep it safe`,
    "credential given in prose 1:29",
  ],
  ["a key named in prose, with a colon", `our Stripe secret key: "${walk(20)}"`, "credential given in prose 1:25"],
  [
    "an api key with no verb",
    `use api key ${walk(32, "0123456789abcdef")} for the staging account`,
    "credential given in prose 1:13",
  ],
]

describe("the guard refuses the forms it used to miss", () => {
  test.each(refused)("%s", (_, brief, expected) => {
    expect(findings(brief)).toEqual([expected])
  })

  test("a refusal never carries the value, whatever the form", () => {
    for (const [, brief] of refused)
      for (const finding of findSecrets(brief)) expect(Object.keys(finding).sort()).toEqual(["column", "kind", "line"])
  })
})

describe("positions are those of the text as written", () => {
  test.each([
    ["after invisible characters", `a\u200b\u200bb ${ghp}`, "GitHub token 1:6"],
    ["after a ligature that normalises to two letters", `\ufb01le ${ghp}`, "GitHub token 1:5"],
    ["after escaped newlines on the same line", `{"a": "x\\ny\\nz", "k": "${ghp}"}`, "GitHub token 1:24"],
    ["on a later line, after escapes", `one\\ntwo\nthree ${ghp}`, "GitHub token 2:7"],
    [
      "of each of two secrets, in order",
      `${ghp}\n\u200bpostgres://u:p4ss@h/db`,
      "GitHub token 1:1|password in a URL 2:15",
    ],
  ])("%s", (_, brief, expected) => {
    expect(findings(brief)).toEqual(expected.split("|"))
  })

  test("the view maps every character back: stripped ones vanish, escapes shrink, expansions repeat", () => {
    const view = normalise("a\u200bb\\nc\ufb01")
    expect(view.text).toBe("ab\nc" + "fi")
    expect(view.origin).toEqual([0, 2, 3, 5, 6, 6, 7])
  })

  test("a fold that would grow a character past four is not made: the view stays the size of the brief", () => {
    const brief = "\ufdfa".repeat(1000)
    expect(normalise(brief).text.length).toBe(1000)
    expect(normalise("\u3390").text).toBe("Hz")
  })
})

const clean: [string, string][] = [
  ["an ordinary brief", "Refactor the token bucket rate limiter in src/limiter.ts; keep its API and run bun test."],
  ["a URL without a password", "Seed postgres://localhost/db, then postgres://app@localhost:5432/db."],
  ["git and ssh URLs with a user", "Clone git@github.com:org/repo.git or ssh://git@host.test:22/repo.git"],
  ["plain web URLs", "See https://example.com/a?b=c#d and http://[::1]:8080/health and mailto:ops@example.com"],
  [
    "a URL with a placeholder password",
    "postgres://user:${DB_PASSWORD}@db/app and postgres://user:<password>@host/db and redis://:****@cache",
  ],
  ["Authorization from a variable", "Authorization: Bearer ${TOKEN}\nheaders: { Authorization: `Bearer ${token}` }"],
  ["Authorization built in code", '{ "Authorization": "Bearer " + token, Authorization: authHeader }'],
  ["Authorization with a placeholder", "Authorization: Bearer <token>"],
  [
    "bearer and basic in prose",
    "Use bearer authentication for the API. Basic usage: Basic authentication is disabled.",
  ],
  ["a WWW-Authenticate challenge", `res.setHeader("WWW-Authenticate", 'Bearer realm="api"')`],
  [
    "docker -u uid:gid and user:group",
    "docker run -u 1000:1000 img && curl -s x.test; docker run -u app:staff img && git push -u origin main:main",
  ],
  ["curl -u from variables, or prompting", 'curl -u "$USER:$PASS" https://x.test; curl -u admin: https://x.test'],
  ["an i18n file", '{"password": "Forgot your password?", "token": "Enter the 6 digit code", "auth": "Sign in"}'],
  ["a passphrase of plain words (indistinguishable from prose)", '"passphrase": "correct horse battery staple"'],
  [
    "documented template tokens",
    "sk_live_xxxxxxxxxxxxxxxxxxxxxxxx npm_XXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXX glpat-xxxxxxxxxxxxxxxxxxxx",
  ],
  ["Slack's documented webhook", "https://hooks.slack.com/services/T00000000/B00000000/XXXXXXXXXXXXXXXXXXXXXXXX"],
  [
    "aws configure without a secret",
    "aws configure set region eu-west-1 && aws configure set aws_secret_access_key $AWS_SECRET",
  ],
  [
    "a token read by a command",
    'export FOO_TOKEN="$(vault read -field=token secret/foo)"\necho "$PW" | docker login --password-stdin',
  ],
  ["secrets kept in files", "--token-file ~/.token, password: /run/secrets/db_password, token: ~/.config/gh/hosts.yml"],
  [
    "a URL under a secret-sounding name",
    "auth: https://login.example.org/common/oauth2, token_endpoint: https://auth.test/token",
  ],
  ["counts and flags", "max_tokens: 4096, tokenizer: cl100k_base, auth: required, pass: true, bypass: true"],
  [
    "code that fetches secrets",
    'password = getpass.getpass()\nsecret_key = os.urandom(32)\ntoken := os.Getenv("TOKEN")',
  ],
  [
    "optional chaining and non-null assertions",
    "const token = extra._meta?.progressToken; const secret = opts.secret!; const apiKey = cfg?.[name]",
  ],
  [
    "documentation with capitalised and elided placeholders",
    "curl -u USER:PASSWORD x; mysql -pSECRET; docker login -p TOKEN; openssl enc -pass pass:PASSPHRASE; postgres://app:PASSWORD@db; machine h login u password …",
  ],
  ["auth in code", 'const auth = useAuth(); if (!auth.user) redirect("/login"); passport.authenticate("local")'],
  ["a .netrc line from a variable", "machine api.example.com login bot password $NETRC_PASSWORD"],
  ["Hugging Face calls", 'hf_hub_download(repo_id="bert-base-uncased"); hf_transformers_cache_directory_name'],
  ["a Windows path with backslash escapes", "Open C:\\new\\table\\token.txt and C:\\Users\\me\\secret"],
  ["zero-width characters in prose", "hello\u200bworld, na\u00efve caf\u00e9, \ufb01le, \uff21\uff22\uff23"],
  [
    "a commit id, a UUID and a digest after escapes",
    "sha\\n5ac971b2f0a3c9d8e7f6a5b4c3d2e1f0a9b8c7d6 550e8400-e29b-41d4-a716-446655440000",
  ],
  ["kebab flags that end in a secret word", "--auth-type=basic --no-token --skip-password-check"],
  ["a YAML auth block", "auth:\n  type: oauth\n  scopes: [read, write]"],
  [
    "arrow functions over secret-named parameters",
    "tokens.map(token => token.trim()); const f = (apiKey) => apiKey; secret => fetchSecret(secret)",
  ],
  ["mysql prompting for the password, and its port", "mysql -u root -p orders && mysql -P3306 -h db --password"],
  ["PWD and paths before a semicolon", "PWD=/home/user; cd /srv; Password=${DB_PASSWORD};"],
  ["an XML element from a variable", "<password>${DB_PASSWORD}</password><token></token>"],
  [
    "logins that prompt or read stdin, and secrets from files",
    "docker login -u bot ghcr.io; docker run -p 8080:80 img; gh secret set X < key.txt; openssl enc -pass env:PW; kubectl create secret generic x --from-file=key=./k",
  ],
  ["base64 of something that is not a key", `data: ${btoa("-----BEGIN CERTIFICATE-----\nMIIB")}${"A".repeat(40)}`],
  [
    "env entries from secrets, and ordinary name/value pairs",
    'env:\n  - name: API_TOKEN\n    valueFrom:\n      secretKeyRef: { name: api, key: token }\n  - name: LOG_LEVEL\n    value: debug\nsetHeader("Content-Type", "application/json")',
  ],
  ["accented and non-Latin text", "Résumé naïve Ελληνικά 日本語 ăâî, token accounting in Türkçe"],
  [
    "credentials named in prose, not given",
    "The password is stored in Vault; the token is read from $GITHUB_TOKEN; rotate the api key in src/keys.ts",
  ],
  [
    "ids and digests after a secret word",
    "the secret is sha256:5ac971b2f0a3c9d8e7f6a5b4c3d2e1f0a9b8c7d6; token 550e8400-e29b-41d4-a716-446655440000 is the request id",
  ],
  [
    "prose about how secrets are made",
    "password hashing uses argon2id with m=65536,t=3,p=4; secret key derivation (HKDF-SHA256) in crypto/kdf.go",
  ],
  [
    "where the keys live",
    "the private key lives at ~/.ssh/id_ed25519; signing key: see docs/release-signing.md; token: process.env.NPM_TOKEN",
  ],
]

describe("the false-positive corpus passes", () => {
  test.each(clean)("%s", (_, brief) => {
    expect(findings(brief)).toEqual([])
  })
})
