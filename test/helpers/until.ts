// Waiting on a condition another process brings about: polled, with a ceiling so a test that cannot
// get there fails instead of hanging. The caller asserts the answer.

/** Polls `check` every 100 ms until it holds or `ms` passes; the last answer. */
export async function until(check: () => Promise<boolean> | boolean, ms: number): Promise<boolean> {
  const deadline = Date.now() + ms
  while (!(await check()) && Date.now() < deadline) await Bun.sleep(100)
  return check()
}
