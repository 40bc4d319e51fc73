// The secret guard: a brief is sent to a model (often a cheaper, third-party one) and stored in the
// task record, so one that carries a credential is refused before anything starts. Pure: text in,
// findings out. A finding names the kind and where it is, never the value, so the refusal itself does
// not repeat the secret into the parent's context or a log.
//
// Two families. Token formats whose prefix is distinctive enough to trust on sight (a private key
// block, ghp_…, AKIA…), and `key = value` assignments under a secret-sounding name whose value looks
// random: at least MIN_SECRET_LENGTH characters with at least MIN_ENTROPY bits of Shannon entropy per
// character, and not a placeholder. Bare high-entropy strings (a sha256 digest, a commit id, a UUID,
// base64) are NOT refused without such a name: briefs quote digests and ids all the time, and
// refusing them would teach parents to ignore the guard.

export interface SecretFinding {
  /** What it looks like, e.g. "GitHub token"; never the value. */
  kind: string
  /** 1-based, of the value's first character. */
  line: number
  column: number
}

/** Below this a value is a word or a short password-in-a-test, not a credential worth a refusal. */
export const MIN_SECRET_LENGTH = 12
/** Bits per character: random alphanumerics of 12+ characters score about 3.2 to 4.5, words and repeats far less. */
export const MIN_ENTROPY = 3

interface TokenFormat {
  kind: string
  pattern: RegExp
  /** The part a placeholder check looks at (the prefix repeats in every real token). */
  body?: (match: string) => string
  /** A further condition on the body, checked in code: a lookahead in the pattern would rescan the rest of a long run at every start (quadratic). */
  accept?: (body: string) => boolean
}

// Order matters only for overlapping prefixes: sk-ant- is Anthropic's before it is OpenAI-shaped.
const TOKEN_FORMATS: TokenFormat[] = [
  { kind: "private key", pattern: /-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----\r?\n(?:[\w-]+:[^\n]*\n)*\r?\n?[A-Za-z0-9+/=\r\n]{40,}/g },
  { kind: "GitHub token", pattern: /\bgh[opsur]_[A-Za-z0-9]{36,255}\b/g, body: (m) => m.slice(4) },
  { kind: "GitHub token", pattern: /\bgithub_pat_[A-Za-z0-9_]{60,255}\b/g, body: (m) => m.slice(11) },
  { kind: "AWS access key id", pattern: /\b(?:AKIA|ASIA)[0-9A-Z]{16}\b/g, body: (m) => m.slice(4) },
  { kind: "Slack token", pattern: /\bxox[bpars]-[A-Za-z0-9-]{10,}/g, body: (m) => m.slice(5) },
  { kind: "Anthropic API key", pattern: /\bsk-ant-[A-Za-z0-9_-]{20,}/g, body: (m) => m.slice(7) },
  // A digit is required: kebab-case names such as sk-learn-pipeline-config have none.
  { kind: "OpenAI API key", pattern: /\bsk-(?!ant-)(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{20,}/g, body: (m) => m.replace(/^sk-(?:proj-|svcacct-|admin-)?/, ""), accept: (body) => /\d/.test(body) },
  { kind: "Google API key", pattern: /\bAIza[0-9A-Za-z_-]{35}(?![0-9A-Za-z_-])/g, body: (m) => m.slice(4) },
  { kind: "JWT", pattern: /\beyJ[A-Za-z0-9_-]{10,}\.eyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}/g, body: (m) => m.split(".")[2]! },
]

// The name must END in the secret word (DB_PASSWORD, apiKey, GITHUB_TOKEN), so max_tokens, tokenizer
// and secret_name are not read as secrets. `pwd` is left out: PWD=/some/path is everywhere in shell.
// A name starts only after a character that cannot be part of one, so a long run of name characters
// is walked once, not once per position (a multi-megabyte brief stays linear).
const ASSIGNMENT =
  /(?<![A-Za-z0-9_.-])([A-Za-z0-9_.-]*?(?:password|passwd|passphrase|secret|token|api[_-]?key|access[_-]?key|private[_-]?key))["']?[ \t]*(?::=|=(?![=>])|:(?!:))[ \t]*(?:"([^"\s]*)"|'([^'\s]*)'|`([^`\s]*)`|([^\s"'`]+))/gi

/** Values that stand for a secret without being one: documentation, templates, code that fetches it. */
export function isPlaceholder(value: string): boolean {
  const v = value.trim()
  if (/^<[^>]*>$/.test(v) || /^\[[^\]]*\]$/.test(v)) return true // <your-key>, [token]
  if (/\$\{|\$\(|\{\{|^\$[A-Za-z_]|^%[A-Za-z_]+%$/.test(v)) return true // ${VAR}, ${{ secrets.X }}, $VAR, %VAR%
  if (/^(?:process\.env|import\.meta\.env|os\.environ|os\.getenv|env|ENV|Bun\.env|System\.getenv|secrets)\b/.test(v)) return true
  if (/[(]/.test(v)) return true // a call: getSecret(), z.string()
  if (/^[x*•.#_-]+$/i.test(v) || /(.)\1{5,}/.test(v)) return true // xxxx, ****, aaaaaa…
  if (/example|changeme|change[_-]me|placeholder|your[_-]|redacted|dummy|replace[_-]?me|insert[_-]|todo|fixme|sample|not[_-]?a[_-]?(?:real|secret)/i.test(v)) return true
  return false
}

/** A reference in code (authToken, config.secret, options["key"]), not a literal: no digit, identifier-shaped. */
function isCodeReference(value: string): boolean {
  return /^[A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*|\[[^\]]*\])*[,;]?$/.test(value) && !/\d/.test(value)
}

export function shannonEntropy(value: string): number {
  const counts = new Map<string, number>()
  for (const char of value) counts.set(char, (counts.get(char) ?? 0) + 1)
  let bits = 0
  for (const count of counts.values()) {
    const p = count / value.length
    bits -= p * Math.log2(p)
  }
  return bits
}

export const looksRandom = (value: string) => value.length >= MIN_SECRET_LENGTH && shannonEntropy(value) >= MIN_ENTROPY

/** Distinct characters of a token's body: fewer than 8 is a template (ghp_xxxx…, AKIAXXXX…, sk-0000…). */
const templated = (body: string) => new Set(body).size < 8 || /EXAMPLE/.test(body)

export function findSecrets(text: string): SecretFinding[] {
  const found: { kind: string; index: number }[] = []
  for (const format of TOKEN_FORMATS) {
    for (const match of text.matchAll(format.pattern)) {
      const body = format.body ? format.body(match[0]) : match[0]
      if (templated(body) || (format.accept && !format.accept(body))) continue
      found.push({ kind: format.kind, index: match.index })
    }
  }
  for (const match of text.matchAll(ASSIGNMENT)) {
    const quoted = match[2] ?? match[3] ?? match[4]
    const value = (quoted ?? match[5]!).replace(quoted === undefined ? /[,;]+$/ : /$^/, "")
    if (!value || isPlaceholder(value) || (quoted === undefined && isCodeReference(value)) || !looksRandom(value)) continue
    const index = match.index + match[0].lastIndexOf(value)
    // A recognised token under a secret name is reported once, by its format.
    if (found.some((f) => f.index === index)) continue
    found.push({ kind: `high-entropy value assigned to ${match[1]}`, index })
  }
  return found.sort((a, b) => a.index - b.index).map(({ kind, index }) => ({ kind, ...position(text, index) }))
}

function position(text: string, index: number) {
  const before = text.slice(0, index)
  const line = before.split("\n").length
  return { line, column: index - before.lastIndexOf("\n") }
}
