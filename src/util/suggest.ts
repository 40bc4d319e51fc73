// "Did you mean": the known names nearest to a mistyped one. Used for CLI flags and config.json keys.

/** Edit distance with adjacent transpositions counted as one edit (`jsno` is one edit from `json`). */
function editDistance(a: string, b: string): number {
  const rows: number[][] = Array.from({ length: a.length + 1 }, (_, i) => [i, ...new Array<number>(b.length).fill(0)])
  for (let j = 1; j <= b.length; j++) rows[0]![j] = j
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1
      let best = Math.min(rows[i - 1]![j]! + 1, rows[i]![j - 1]! + 1, rows[i - 1]![j - 1]! + cost)
      const swapped = i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]
      if (swapped) best = Math.min(best, rows[i - 2]![j - 2]! + 1)
      rows[i]![j] = best
    }
  }
  return rows[a.length]![b.length]!
}

/**
 * The candidates `word` most likely meant: those it is a prefix of, or that are a prefix of it
 * (`--purge` for `--purge-config`, `--timeout` for `--timeouts`), else those within a few edits
 * (about one in three characters). Case is ignored. Empty when nothing is close.
 */
export function nearest(word: string, candidates: readonly string[]): string[] {
  const typed = word.toLowerCase()
  if (!typed) return []
  const prefixed = candidates.filter((c) => {
    const known = c.toLowerCase()
    const long = Math.min(known.length, typed.length) >= 3
    return known !== typed && long && (known.startsWith(typed) || typed.startsWith(known))
  })
  const limit = Math.max(1, Math.floor(typed.length / 3))
  const pool = prefixed.length ? prefixed : candidates
  const scored = pool.map((c) => ({ c, d: editDistance(typed, c.toLowerCase()) }))
  const close = prefixed.length ? scored : scored.filter(({ d }) => d <= limit)
  // The fewest edits win: `model` means `models` rather than `modelVariants`.
  const best = Math.min(...close.map(({ d }) => d))
  return close.filter(({ d }) => d === best).map(({ c }) => c)
}

/** "did you mean --a?" / "did you mean --a or --b?"; undefined when nothing is close. */
export function didYouMean(word: string, candidates: readonly string[], show = (name: string) => name) {
  const found = nearest(word, candidates).slice(0, 3)
  if (!found.length) return undefined
  return `did you mean ${found.map(show).join(" or ")}?`
}
