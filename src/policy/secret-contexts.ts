// Credentials known by where they stand rather than by their shape: under a secret-sounding name
// (`DB_PASSWORD=…`, `"api_key": "…"`, `--token …`, `aws configure set aws_secret_access_key …`), in a
// URL's userinfo (`postgres://user:pass@host`), an Authorization header, `curl -u user:pass`, a
// .netrc entry or base64-wrapped basic auth. Each detector returns spans of the text it was given.
import { isCodeReference, isLocator, isPlaceholder, looksLikeSpacedSecret, looksRandom } from "./secret-values"

export interface Hit {
  kind: string
  /** UTF-16 offsets of the value, end exclusive. */
  start: number
  end: number
}

// The name must END in the secret word (DB_PASSWORD, apiKey, GITHUB_TOKEN), so max_tokens, tokenizer
// and secret_name are not read as secrets. `pwd` is left out: PWD=/some/path is everywhere in shell.
const NAME =
  "[A-Za-z0-9_.-]*?(?:password|passwd|passphrase|pass|secret|token|credentials?|auth|api[_-]?key|" +
  "(?:access|private|secret|account|signing|encryption|master|session|app|client)[_-]?key)"
const QUOTED = "\"([^\"\\n]*)\"|'([^'\\n]*)'|`([^`\\n]*)`"
// A name starts only after a character that cannot be part of one, so a long run of name characters
// is walked once, not once per position (a multi-megabyte brief stays linear).
const ASSIGNMENT = new RegExp(
  `(?<![A-Za-z0-9_.-])(${NAME})["']?\\]?[ \\t]*(?::=|=>|=(?![=>])|:(?!:))[ \\t]*(?:${QUOTED}|([^\\s"'\`]+))`,
  "gi",
)
/** `--token VALUE`, `aws_secret_access_key VALUE`: a flag or a snake_case name, then a space. */
const SPACED = new RegExp(`(?<![A-Za-z0-9_.-])(${NAME})[ \\t]+(?:${QUOTED}|([^\\s"'\`]+))`, "gi")

/** `<password>…</password>`, and .NET's `<add key="ApiKey" value="…"/>`. */
const XML_ELEMENT = new RegExp(`<(${NAME})>([^<\\s]+)</`, "gi")
/** `define('DB_PASSWORD', '…')`, `setHeader("X-Api-Key", "…")`, `os.environ.setdefault("TOKEN", "…")`. */
const QUOTED_PAIR = new RegExp(`["'](${NAME})["'][ \\t]*,[ \\t]*(?:"([^"\\n]*)"|'([^'\\n]*)')`, "gi")
/**
 * A name and a value as two fields: Kubernetes `- name: API_TOKEN` / `value: …`, ECS `{"name": …, "value": …}`, .NET
 * `<add key= value=>`.
 */
const NAME_VALUE = new RegExp(
  `(?<![\\w-])["']?(?:key|name|parameterkey)["']?[ \\t]*[=:][ \\t]*["']?(${NAME})["']?[ \\t]*,?\\s{0,40}?` +
    `-?[ \\t]*["']?(?:value|parametervalue)["']?[ \\t]*[=:][ \\t]*(?:"([^"\\n]*)"|'([^'\\n]*)'|([^\\s"'\`,}]+))`,
  "gi",
)
const URL_PASSWORD =
  /(?<![A-Za-z0-9+.-])[A-Za-z][A-Za-z0-9+.-]*:\/\/[^\s/?#@:"'`<>]*:([^\s/?#@"'`<>]+)@(?=[A-Za-z0-9[_])/g
const AUTH_SCHEMES = "Bearer|Basic|Token|Bot|Key|ApiKey|SSWS|GenieKey|Splunk|OAuth|JWT|AWS4-HMAC-SHA256"
const AUTHORIZATION = new RegExp(
  `(?<![\\w-])(?:Proxy-)?Authorization["']?\\]?[ \\t]*[:=,][ \\t]*["'\`]?[ \\t]*` +
    `(?:(?:${AUTH_SCHEMES})[ \\t]+)?([^\\s"'\`,;]+)`,
  "gi",
)
const BEARER = /(?<![\w-])Bearer[ \t]+([A-Za-z0-9._~+/-]+=*)/gi
const BASIC = /(?<![\w-])Basic[ \t]+([A-Za-z0-9+/]{6,}={0,2})(?![A-Za-z0-9+/=])/g
const USER_OPTION = /(?<![\w-])(?:-u|--user|--proxy-user|-U)(?:[ \t]+|=)["']?([^\s"':]+):([^\s"'`;&|]+)/g
/** `mysql -pSECRET` (the value glued to -p) and `sshpass -p SECRET`: a password whatever it looks like. */
// Split in two for the line width; the first half has no capturing group, so `\1` is the second's.
const MYSQL_PASSWORD = new RegExp(
  /(?<![\w-])(?:mysql|mysqldump|mariadb|mysqladmin)(?![\w-])/.source +
    /[^\n;&|]{0,200}?[ \t]-p(?!assword)(["']?)([^\s"'`;&|-][^\s"'`;&|]*)\1/.source,
  "g",
)
const SSHPASS = /(?<![\w-])sshpass[ \t]+-p[ \t]*(["']?)([^\s"'`;&|]+)\1/g
/**
 * A registry login's `-p SECRET`, `gh secret set NAME --body SECRET`, `kubectl create secret
 * --from-literal=KEY=SECRET`, openssl's `pass:SECRET`.
 */
// As MYSQL_PASSWORD: the first half has no capturing group.
const LOGIN_PASSWORD = new RegExp(
  /(?<![\w-])(?:docker|podman|buildah|skopeo|helm|oras|nerdctl)(?![\w-])[^\n;&|]{0,30}?[ \t]login(?![\w-])/.source +
    /[^\n;&|]{0,200}?[ \t]-p(?:[ \t]+|=)(["']?)([^\s"'`;&|-][^\s"'`;&|]*)\1/.source,
  "g",
)
const GH_SECRET =
  /(?<![\w-])secret[ \t]+set[ \t]+\S+[^\n;&|]{0,100}?[ \t](?:-b|--body)(?:[ \t]+|=)(["']?)([^\s"'`;&|-][^\s"'`;&|]*)\1/g
const FROM_LITERAL = /(?<![\w-])--from-literal(?:[ \t]+|=)(["']?)[\w.-]+=([^\s"'`;&|]+)\1/g
// The span starts at `pass:`, where a `-pass VALUE` assignment would start, so this kind is the one named.
const OPENSSL_PASS = /(?<![\w-])-pass(?:in|out)?[ \t]+(["']?)(pass:[^\s"'`;&|]+)\1/g
/** An ADO/ODBC connection string's `Password=…;` next to its server and user. */
const CONNECTION_PASSWORD = /(?<![\w-])(?:Password|Pwd)[ \t]*=[ \t]*([^;\s"']+)(?=;|["'\s]|$)/gi
const CONNECTION_STRING = /(?:Server|Data Source|Host|Address|Uid|User ID|User Id|Initial Catalog|Database)[ \t]*=/i
/**
 * A credential named in prose and then given: "the root password is …", "our Stripe secret key: …",
 * "the token for the CI bot is …", and without a verb after an unambiguous name ("api key …"). Only a
 * value with letters and digits (or symbols) that looks random counts, never a digest (`sha256:…`):
 * "the password is stored in Vault" and "token 550e8400-… is the request id" are prose.
 */
const PROSE_NAME =
  "password|passphrase|passcode|passwd|(?:api|access|secret|private|license|signing)[ _-]?key|client[ _-]?secret"
const PROSE_FOR = "(?:[ \\t]+(?:for|of|on|to|at)(?:[ \\t]+[^\\s,;:]{1,40}?){1,3}?)?"
const PROSE_VALUE = `(?:${QUOTED}|([^\\s"'\`]+))`
const PROSE_STATED = new RegExp(
  `(?<![\\w-])(?:${PROSE_NAME}|token|secret)${PROSE_FOR}(?:[ \\t]*[:=][ \\t]*|[ \\t]+(?:is|was)[ \\t]+)${PROSE_VALUE}`,
  "gi",
)
const PROSE_BARE = new RegExp(`(?<![\\w-])(?:${PROSE_NAME})[ \\t]+${PROSE_VALUE}`, "gi")
const DIGEST = /^(?:sha\d*|md5|blake\d*\w*)[:-]/i
const NETRC = /(?<![\w-])(?:machine[ \t]+\S+|default)(?:\s+(?:login|account)\s+\S+){0,2}\s+password\s+([^\s`;]+)/g

/** The span of capture group `group` of `match`: its last occurrence in the match, as values end it. */
function span(match: RegExpMatchArray, value: string, kind: string): Hit {
  const start = match.index! + match[0].lastIndexOf(value)
  return { kind, start, end: start + value.length }
}

/** Up to 200 characters of the shell command that `index` is in: from the last newline, `;`, `&` or `|`. */
function commandBefore(text: string, index: number): string {
  const before = text.slice(Math.max(0, index - 200), index)
  return before.slice(Math.max(...["\n", ";", "&", "|"].map((separator) => before.lastIndexOf(separator))) + 1)
}

const literal = (value: string) => !!value && !isPlaceholder(value)

function assignments(text: string, pattern: RegExp, spaced: boolean): Hit[] {
  const hits: Hit[] = []
  for (const match of text.matchAll(pattern)) {
    const name = match[1]!
    if (spaced && !name.startsWith("-") && !name.includes("_")) continue
    const quoted = match[2] ?? match[3] ?? match[4]
    const value = quoted ?? match[5]!.replace(/[,;]+$/, "")
    if (spaced && value.startsWith("-")) continue // the next flag, not this one's value
    // openssl's pass phrase arguments: env:VAR, file:path and fd:N name where it is.
    if (/^(?:env|file|fd):|^stdin$/.test(value) || !literal(value.replace(/^pass:/, ""))) continue
    if (!literal(value) || isLocator(value) || (quoted === undefined && isCodeReference(value))) continue
    if (!(/\s/.test(value) ? looksLikeSpacedSecret(value) : looksRandom(value))) continue
    hits.push(span(match, value, `high-entropy value assigned to ${name}`))
  }
  return hits
}

function basicAuth(encoded: string): boolean {
  try {
    return /^[\x21-\x39\x3b-\x7e]+:[\x20-\x7e]+$/.test(atob(encoded))
  } catch {
    // Not base64: not basic-auth credentials.
    return false
  }
}

export function contextHits(text: string): Hit[] {
  const hits: Hit[] = []
  for (const match of text.matchAll(URL_PASSWORD))
    if (literal(match[1]!)) hits.push(span(match, match[1]!, "password in a URL"))
  for (const match of text.matchAll(AUTHORIZATION)) {
    const value = match[1]!
    if (literal(value) && !isCodeReference(value) && value.length >= 8)
      hits.push(span(match, value, "credential in an Authorization header"))
  }
  // A digit too: "bearer authentication" is prose.
  for (const match of text.matchAll(BEARER))
    if (literal(match[1]!) && looksRandom(match[1]!) && /\d/.test(match[1]!))
      hits.push(span(match, match[1]!, "bearer token"))
  for (const match of text.matchAll(BASIC))
    if (basicAuth(match[1]!)) hits.push(span(match, match[1]!, "basic-auth credentials (base64)"))
  for (const match of text.matchAll(USER_OPTION)) {
    const [user, password] = [match[1]!, match[2]!]
    // Only an HTTP client's: `docker run -u app:staff` and `chown -u` name a user and a group.
    const command = commandBefore(text, match.index!)
    if (!(command.includes("curl") || command.includes("wget")) || !literal(password) || !literal(user)) continue
    hits.push(span(match, password, "password in a -u/--user option"))
  }
  for (const pattern of [MYSQL_PASSWORD, SSHPASS, LOGIN_PASSWORD, OPENSSL_PASS])
    for (const match of text.matchAll(pattern))
      if (literal(match[2]!.replace(/^pass:/, "")))
        hits.push(span(match, match[2]!, "password in a command-line -p option"))
  for (const match of text.matchAll(GH_SECRET))
    if (literal(match[2]!)) hits.push(span(match, match[2]!, "value of gh secret set --body"))
  for (const match of text.matchAll(FROM_LITERAL))
    if (literal(match[2]!)) hits.push(span(match, match[2]!, "value of a kubectl --from-literal secret"))
  for (const match of text.matchAll(CONNECTION_PASSWORD)) {
    const before = text.slice(Math.max(0, match.index! - 200), match.index!)
    const line = before.slice(before.lastIndexOf("\n") + 1)
    if (CONNECTION_STRING.test(line) && literal(match[1]!) && !isLocator(match[1]!))
      hits.push(span(match, match[1]!, "password in a connection string"))
  }
  for (const pattern of [XML_ELEMENT, QUOTED_PAIR, NAME_VALUE])
    for (const match of text.matchAll(pattern)) {
      const value = match[2] ?? match[3] ?? match[4]!
      if (literal(value) && !isLocator(value) && looksRandom(value))
        hits.push(span(match, value, `high-entropy value assigned to ${match[1]}`))
    }
  for (const match of text.matchAll(NETRC))
    if (literal(match[1]!)) hits.push(span(match, match[1]!, "password in a .netrc entry"))
  return [...hits, ...assignments(text, ASSIGNMENT, false), ...assignments(text, SPACED, true), ...prose(text)]
}

/** Credentials given in prose, last: a more specific detector seeing the same value names it. */
function prose(text: string): Hit[] {
  const hits: Hit[] = []
  for (const pattern of [PROSE_STATED, PROSE_BARE])
    for (const match of text.matchAll(pattern)) {
      const value = (match[1] ?? match[2] ?? match[3] ?? match[4]!).replace(/[.,;:!?)]+$/, "")
      const mixed = /[A-Za-z]/.test(value) && /[^A-Za-z]/.test(value) && !DIGEST.test(value)
      if (mixed && literal(value) && !isLocator(value) && !isCodeReference(value) && looksRandom(value))
        hits.push(span(match, value, "credential given in prose"))
    }
  return hits
}
