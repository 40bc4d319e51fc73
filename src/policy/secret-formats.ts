// Credential formats whose shape is distinctive enough to trust on sight: a fixed prefix and a
// random body. Anchored on the public secret-scanner rule sets (gitleaks' default rules, GitHub
// secret scanning's partner patterns) and each vendor's documented token format; the kind names
// the vendor, never the value.

export interface TokenFormat {
  kind: string
  /**
   * Literal text every match contains: a format whose keywords are all absent is not run (a cheap scan of a long
   * brief).
   */
  keywords: string[]
  pattern: RegExp
  /** The part a placeholder check looks at (the prefix repeats in every real token). */
  body?: (match: string) => string
  /**
   * A further condition on the body, checked in code: a lookahead in the pattern would rescan the
   * rest of a long run at every start (quadratic).
   */
  accept?: (body: string) => boolean
}

/** The body after the first match of `prefix` (the vendor prefix, the webhook host and path). */
const after = (prefix: RegExp) => (match: string) => match.replace(prefix, "")
const hasDigit = (body: string) => /\d/.test(body)
function decodesToPrivateKey(match: string): boolean {
  try {
    return /^-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY/.test(atob(match.slice(0, 80)))
  } catch {
    // Not base64: not this format.
    return false
  }
}

/** Random mixed case, not a camelCase identifier: a letters-only format needs many capitals. */
const mixedCase = (body: string) => (body.match(/[A-Z]/g)?.length ?? 0) >= 8 && (body.match(/[a-z]/g)?.length ?? 0) >= 8

// A PEM private key, on its lines or flattened to one (spaces for newlines), optionally with the
// headers of an encrypted key, or joined from string literals ("…-----\n" + "MIIE…"): the header
// alone is prose ("reject files that start with …").
const PEM =
  /-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----[\s"'`+,]*(?:[\w-]+:[ \t]*[^\s]+\s+){0,4}[A-Za-z0-9+/=]{40,}/g

// Order matters only for overlapping prefixes: sk-ant- is Anthropic's before it is OpenAI-shaped.
export const TOKEN_FORMATS: TokenFormat[] = [
  { kind: "private key", keywords: ["PRIVATE KEY"], pattern: PEM },
  // base64 of "-----BEGIN": a kubeconfig's client-key-data, a PEM in a Kubernetes secret.
  {
    kind: "private key (base64)",
    keywords: ["LS0tLS1CRUdJTi"],
    pattern: /LS0tLS1CRUdJTi[A-Za-z0-9+/]{40,}={0,2}/g,
    accept: decodesToPrivateKey,
  },
  {
    kind: "PuTTY private key",
    keywords: ["PuTTY-User-Key-File-"],
    pattern: /PuTTY-User-Key-File-\d: [\s\S]{0,2000}?Private-Lines: \d+\s+[A-Za-z0-9+/=]{40,}/g,
  },
  {
    kind: "age secret key",
    keywords: ["AGE-SECRET-KEY-1"],
    pattern: /\bAGE-SECRET-KEY-1[0-9A-Z]{58}\b/g,
    body: after(/^AGE-SECRET-KEY-1/),
  },
  {
    kind: "GitHub token",
    keywords: ["ghp_", "gho_", "ghs_", "ghu_", "ghr_"],
    pattern: /\bgh[opsur]_[A-Za-z0-9]{36,255}\b/g,
    body: after(/^gh._/),
  },
  {
    kind: "GitHub token",
    keywords: ["github_pat_"],
    pattern: /\bgithub_pat_[A-Za-z0-9_]{60,255}\b/g,
    body: after(/^github_pat_/),
  },
  {
    kind: "GitLab token",
    keywords: ["gl"],
    pattern: /\bgl(?:pat|ptt|dt|rt|cbt|soat|ffct|oas|imt|agent)-[A-Za-z0-9_.-]{20,}/g,
    body: after(/^gl[a-z]+-/),
  },
  {
    kind: "GitLab runner token",
    keywords: ["GR1348941"],
    pattern: /\bGR1348941[A-Za-z0-9_-]{20,}/g,
    body: after(/^GR1348941/),
  },
  {
    kind: "AWS access key id",
    keywords: ["AKIA", "ASIA", "ABIA", "ACCA"],
    pattern: /\b(?:AKIA|ASIA|ABIA|ACCA)[0-9A-Z]{16}\b/g,
    body: after(/^..../),
  },
  { kind: "Slack token", keywords: ["xox"], pattern: /\bxox[bpareo]-[A-Za-z0-9-]{10,}/g, body: after(/^xox.-/) },
  { kind: "Slack token", keywords: ["xapp-"], pattern: /\bxapp-\d-[A-Za-z0-9-]{10,}/g, body: after(/^xapp-\d-/) },
  {
    kind: "Slack webhook URL",
    keywords: ["hooks.slack.com"],
    pattern: /\bhooks\.slack\.com\/(?:services|workflows|triggers)\/[A-Za-z0-9_/+-]{20,}/g,
    body: after(/^[^/]+\/[^/]+\//),
  },
  {
    kind: "Discord webhook URL",
    keywords: ["/api/webhooks/"],
    pattern: /\bdiscord(?:app)?\.com\/api\/webhooks\/\d{5,30}\/[A-Za-z0-9_-]{30,}/g,
    body: after(/^.*\//),
  },
  {
    kind: "Microsoft Teams webhook URL",
    keywords: [".webhook.office.com"],
    pattern: /(?<![\w-])[\w-]+\.webhook\.office\.com\/webhookb2\/[A-Za-z0-9@/_-]{40,}/g,
    body: after(/^.*?webhookb2\//),
  },
  {
    kind: "Anthropic API key",
    keywords: ["sk-ant-"],
    pattern: /\bsk-ant-[A-Za-z0-9_-]{20,}/g,
    body: after(/^sk-ant-/),
  },
  // A digit is required: kebab-case names such as sk-learn-pipeline-config have none.
  {
    kind: "OpenAI API key",
    keywords: ["sk-"],
    pattern: /\bsk-(?!ant-)(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{20,}/g,
    body: after(/^sk-(?:proj-|svcacct-|admin-)?/),
    accept: hasDigit,
  },
  {
    kind: "Stripe key",
    keywords: ["k_live_", "k_test_", "k_prod_"],
    pattern: /\b(?:sk|rk)_(?:live|test|prod)_[A-Za-z0-9]{16,247}\b/g,
    body: after(/^.._[a-z]+_/),
  },
  {
    kind: "Stripe webhook secret",
    keywords: ["whsec_"],
    pattern: /\bwhsec_[A-Za-z0-9+/=]{24,}/g,
    body: after(/^whsec_/),
  },
  { kind: "npm token", keywords: ["npm_"], pattern: /\bnpm_[A-Za-z0-9]{36}\b/g, body: after(/^npm_/) },
  {
    kind: "PyPI token",
    keywords: ["pypi-"],
    pattern: /\bpypi-AgEIcHlwaS5vcmc[A-Za-z0-9_-]{50,}/g,
    body: after(/^pypi-AgEIcHlwaS5vcmc/),
  },
  {
    kind: "Google API key",
    keywords: ["AIza"],
    pattern: /\bAIza[0-9A-Za-z_-]{35}(?![0-9A-Za-z_-])/g,
    body: after(/^AIza/),
  },
  {
    kind: "Google OAuth client secret",
    keywords: ["GOCSPX-"],
    pattern: /\bGOCSPX-[A-Za-z0-9_-]{28}\b/g,
    body: after(/^GOCSPX-/),
  },
  {
    kind: "Google OAuth access token",
    keywords: ["ya29."],
    pattern: /\bya29\.[A-Za-z0-9_-]{30,}/g,
    body: after(/^ya29\./),
  },
  {
    kind: "Hugging Face token",
    keywords: ["hf_"],
    pattern: /\bhf_[A-Za-z0-9]{34,}\b/g,
    body: after(/^hf_/),
    accept: mixedCase,
  },
  {
    kind: "SendGrid API key",
    keywords: ["SG."],
    pattern: /\bSG\.[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{43}\b/g,
    body: after(/^SG\./),
  },
  { kind: "Twilio API key", keywords: ["SK"], pattern: /\bSK[0-9a-f]{32}\b/g, body: after(/^SK/) },
  { kind: "DigitalOcean token", keywords: ["_v1_"], pattern: /\bdo[por]_v1_[a-f0-9]{64}\b/g, body: after(/^do._v1_/) },
  {
    kind: "Shopify token",
    keywords: ["shp"],
    pattern: /\bshp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}\b/g,
    body: after(/^shp.._/),
  },
  { kind: "Databricks token", keywords: ["dapi"], pattern: /\bdapi[a-f0-9]{32}(?:-\d)?\b/g, body: after(/^dapi/) },
  {
    kind: "HashiCorp Vault token",
    keywords: ["hvs.", "hvb.", "hvr."],
    pattern: /\bhv[sbr]\.[A-Za-z0-9_-]{24,}/g,
    body: after(/^hv.\./),
  },
  { kind: "Linear API key", keywords: ["lin_api_"], pattern: /\blin_api_[A-Za-z0-9]{40}\b/g, body: after(/^lin_api_/) },
  {
    kind: "Postman API key",
    keywords: ["PMAK-"],
    pattern: /\bPMAK-[a-f0-9]{24}-[a-f0-9]{34}\b/g,
    body: after(/^PMAK-/),
  },
  {
    kind: "Grafana token",
    keywords: ["glc_", "glsa_"],
    pattern: /\bgl(?:c|sa)_[A-Za-z0-9_+/]{32,}={0,2}/g,
    body: after(/^gl[a-z]+_/),
  },
  {
    kind: "Atlassian API token",
    keywords: ["ATATT3"],
    pattern: /\bATATT3[A-Za-z0-9_=-]{180,}/g,
    body: after(/^ATATT3/),
  },
  {
    kind: "New Relic key",
    keywords: ["NRAK-", "NRII-", "NRJS-"],
    pattern: /\bNR(?:AK|II|JS)-[A-Za-z0-9]{19,32}\b/g,
    body: after(/^NR..-/),
  },
  {
    kind: "Sentry token",
    keywords: ["sntr"],
    pattern: /\bsntr[ysu]s?_[A-Za-z0-9_=+/-]{40,}/g,
    body: after(/^sntr[a-z]+_/),
  },
  {
    kind: "Telegram bot token",
    keywords: [":AA"],
    pattern: /\b\d{8,10}:AA[A-Za-z0-9_-]{33}\b/g,
    body: after(/^\d+:AA/),
  },
  { kind: "Groq API key", keywords: ["gsk_"], pattern: /\bgsk_[A-Za-z0-9]{52}\b/g, body: after(/^gsk_/) },
  { kind: "xAI API key", keywords: ["xai-"], pattern: /\bxai-[A-Za-z0-9]{80}\b/g, body: after(/^xai-/) },
  { kind: "Replicate token", keywords: ["r8_"], pattern: /\br8_[A-Za-z0-9]{37}\b/g, body: after(/^r8_/) },
  { kind: "Perplexity API key", keywords: ["pplx-"], pattern: /\bpplx-[A-Za-z0-9]{48}\b/g, body: after(/^pplx-/) },
  { kind: "Supabase token", keywords: ["sbp_"], pattern: /\bsbp_[a-f0-9]{40}\b/g, body: after(/^sbp_/) },
  {
    kind: "Azure AD client secret",
    keywords: ["Q~"],
    pattern: /(?<![\w~.-])[A-Za-z0-9_~.]{3}\dQ~[A-Za-z0-9_~.-]{31,34}(?![\w~.-])/g,
  },
  {
    kind: "JWT",
    keywords: ["eyJ"],
    pattern: /\beyJ[A-Za-z0-9_-]{10,}\.eyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}/g,
    body: (m) => m.split(".")[2]!,
  },
]
