// Whether a test is running now, and what is to happen once it ends. The hooks are the suite's own
// (test/helpers/preload.ts, bunfig.toml), so they hold in every file: something a helper makes inside a
// test can be handed back when that test ends, and something made in a file's beforeAll (used by the
// tests after it) never is.

let running = false
let atEnd: (() => void | Promise<void>)[] = []

/** Runs `then` once the running test ends; outside a test, never. */
export function whenThisTestEnds(then: () => void | Promise<void>) {
  if (running) atEnd.push(then)
}

/** The suite's beforeEach. */
export function testStarts() {
  running = true
  atEnd = []
}

/** The suite's afterEach: what the test registered, in order. */
export async function testEnded() {
  running = false
  const due = atEnd
  atEnd = []
  for (const then of due) await then()
}
