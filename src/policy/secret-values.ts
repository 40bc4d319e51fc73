// What makes a value a credential rather than a word, a reference or a placeholder: the judgements
// every detector of the secret guard shares (src/policy/secrets.ts).

/** Below this a value is a word or a short password-in-a-test, not a credential worth a refusal. */
export const MIN_SECRET_LENGTH = 12
/** Bits per character: random alphanumerics of 12+ characters score about 3.2 to 4.5, words and repeats far less. */
export const MIN_ENTROPY = 3

/** Values that stand for a secret without being one: documentation, templates, code that fetches it. */
export function isPlaceholder(value: string): boolean {
  const v = value.trim()
  if (/^<[^>]*>$/.test(v) || /^\[[^\]]*\]$/.test(v)) return true // <your-key>, [token]
  if (/\$\{|\$\(|\{\{|^\$[A-Za-z_]|^%[A-Za-z_]+%$/.test(v)) return true // ${VAR}, ${{ secrets.X }}, $VAR, %VAR%
  if (/^(?:process\.env|import\.meta\.env|os\.environ|os\.getenv|env|ENV|Bun\.env|System\.getenv|secrets)\b/.test(v))
    return true
  if (/[(]/.test(v)) return true // a call: getSecret(), z.string()
  if (/^[x*•….#_-]+$/i.test(v) || /(.)\1{5,}/.test(v)) return true // xxxx, ****, …, aaaaaa…
  if (/^[A-Z][A-Z_]*$/.test(v)) return true // PASSWORD, SECRET, YOUR_TOKEN: a name written where the value goes
  if (
    /example|changeme|change[_-]me|placeholder|your[_-]|redacted|dummy/i.test(v) ||
    /replace[_-]?me|insert[_-]|todo|fixme|sample|not[_-]?a[_-]?(?:real|secret)/i.test(v)
  )
    return true
  return false
}

/**
 * Where a secret is kept rather than the secret (`/run/secrets/token`, `~/.config/gh/hosts.yml`,
 * `https://auth.example.com/oauth/token`): a password inside a URL is the URL detector's to find.
 */
export function isLocator(value: string): boolean {
  // Not with a query: `?token=…` in it is an assignment of its own.
  if (/^[a-z][a-z0-9+.-]*:\/\/[^\s:@/?]+(?::\d+)?(?:\/[^\s?]*)?$/i.test(value)) return true
  return /^(?:~|\.{1,2})?\/[\w.-]+(?:\/[\w.-]+)+\/?$/.test(value) && /[A-Za-z]{3}/.test(value)
}

/** A reference in code (authToken, config.secret, options["key"]), not a literal: no digit, identifier-shaped. */
export function isCodeReference(value: string): boolean {
  // Optional chaining and non-null assertions included: extra._meta?.progressToken, opts.token!
  return /^[A-Za-z_$][\w$]*(?:\??\.[A-Za-z_$][\w$]*|(?:\?\.)?\[[^\]]*\]|!)*[,;]?$/.test(value) && !/\d/.test(value)
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
export const templated = (body: string) => new Set(body).size < 8 || /EXAMPLE/.test(body)

/**
 * A quoted value with spaces under a secret name: a credential when its words are credential-like
 * (`'Xk9#mQ2$ vL7pR4wz'`), not when it reads as a sentence (`"Forgot your password?"`, `"Enter the
 * 6 digit code"`). A passphrase of plain words is let through: it cannot be told from prose.
 */
export function looksLikeSpacedSecret(value: string): boolean {
  const words = value.trim().split(/\s+/)
  const joined = words.join("")
  if (!looksRandom(joined)) return false
  const credentialLike = (word: string) =>
    /[A-Za-z]/.test(word) && (/[0-9]|[^\w\s.,;:!?'"()-]/.test(word) || capitalInside(word))
  if (words.some((word) => looksRandom(word) && credentialLike(word))) return true
  const mixed = words.filter(credentialLike)
  return mixed.length * 2 >= words.length
}

/** A capital after a small letter (vL7pR, not Password): one pass, no backtracking. */
function capitalInside(word: string): boolean {
  const first = word.search(/[a-z]/)
  return first >= 0 && /[A-Z]/.test(word.slice(first + 1))
}
