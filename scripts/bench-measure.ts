// What the benchmarks measure with: medians over repeated runs after a warm-up.

export const median = (xs: number[]) => {
  const sorted = [...xs].sort((a, b) => a - b)
  const mid = Math.floor(sorted.length / 2)
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2
}

/** A timer printing one median line; `runs` samples unless told (starts: bench-footprint.ts). */
export function measure(runs: number) {
  async function timed(label: string, body: () => Promise<unknown>, times: number = runs) {
    await body() // warm-up, not counted
    const samples: number[] = []
    for (let i = 0; i < times; i++) {
      const start = performance.now()
      await body()
      samples.push(performance.now() - start)
    }
    const value = median(samples)
    console.log(`${label.padEnd(44)} median ${value.toFixed(0).padStart(6)} ms  (n=${times})`)
    return value
  }
  return { timed }
}
