// The secret guard: a brief is sent to a model (often a cheaper, third-party one) and stored in the
// task record, so one that carries a credential is refused before anything starts. Pure: text in,
// findings out. A finding names the kind and where it is, never the value, so the refusal itself does
// not repeat the secret into the parent's context or a log.
//
// Three families: token formats whose prefix is distinctive enough to trust on sight (a private key
// block, ghp_…, sk_live_…; src/policy/secret-formats.ts); credentials known by where they stand (a
// URL's password, an Authorization header, curl -u, .netrc); and assignments under a secret-sounding
// name whose value looks random (src/policy/secret-contexts.ts). Bare high-entropy strings (a sha256
// digest, a commit id, a UUID, base64) are NOT refused without such a context: briefs quote digests
// and ids all the time, and refusing them would teach parents to ignore the guard.
//
// Every detector reads two views of the brief: the text as written, and the text as a person reads
// it (src/policy/normalise.ts: NFKC, invisible characters dropped, `\n` and `\u003d` escapes undone),
// so a zero-width space inside a token or a PEM block inside a JSON string hides nothing.
import { normalise, type TextView } from "./normalise"
import { contextHits, type Hit } from "./secret-contexts"
import { TOKEN_FORMATS } from "./secret-formats"
import { templated } from "./secret-values"

export { isPlaceholder, looksRandom, MIN_ENTROPY, MIN_SECRET_LENGTH, shannonEntropy } from "./secret-values"

export interface SecretFinding {
  /** What it looks like, e.g. "GitHub token"; never the value. */
  kind: string
  /** 1-based, of the value's first character in the text as written. */
  line: number
  column: number
}

function formatHits(text: string): Hit[] {
  const hits: Hit[] = []
  for (const format of TOKEN_FORMATS) {
    if (!format.keywords.some((keyword) => text.includes(keyword))) continue
    for (const match of text.matchAll(format.pattern)) {
      const body = format.body ? format.body(match[0]) : match[0]
      if (templated(body) || (format.accept && !format.accept(body))) continue
      hits.push({ kind: format.kind, start: match.index, end: match.index + match[0].length })
    }
  }
  return hits
}

const identity = (text: string): TextView => ({ text, origin: [] })
const at = (view: TextView, index: number) => (view.origin.length ? view.origin[index]! : index)

export function findSecrets(text: string): SecretFinding[] {
  const normalised = normalise(text)
  const views = normalised.text === text ? [identity(text)] : [normalised, identity(text)]
  // Every hit in the original's coordinates, in order of trust: the normalised view before the raw
  // one, a format before a context. One secret seen by several detectors is reported once, by the
  // first hit that starts it.
  const hits: (Hit & { rank: number })[] = []
  for (const view of views)
    for (const hit of [...formatHits(view.text), ...contextHits(view.text)])
      hits.push({ kind: hit.kind, start: at(view, hit.start), end: at(view, hit.end), rank: hits.length })
  hits.sort((a, b) => a.start - b.start || a.rank - b.rank)
  const kept: Hit[] = []
  let covered = 0
  for (const hit of hits) {
    if (hit.start < covered) continue
    kept.push(hit)
    covered = Math.max(covered, hit.end)
  }
  const lines = lineStarts(text)
  return kept.map((hit) => ({ kind: hit.kind, ...position(lines, hit.start) }))
}

function lineStarts(text: string): number[] {
  const starts = [0]
  for (let i = text.indexOf("\n"); i >= 0; i = text.indexOf("\n", i + 1)) starts.push(i + 1)
  return starts
}

function position(starts: number[], index: number) {
  let [low, high] = [0, starts.length - 1]
  while (low < high) {
    const middle = (low + high + 1) >> 1
    if (starts[middle]! <= index) low = middle
    else high = middle - 1
  }
  return { line: low + 1, column: index - starts[low]! + 1 }
}
