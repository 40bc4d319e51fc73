// One way for a test to get a scratch directory it cannot forget to remove:
// `await using dir = await tempDir("oc-orch-x-")` removes it when the block ends, however the test
// ends. Fixtures shared by a whole file dispose it in afterAll instead.
import { mkdtemp, rm } from "node:fs/promises"
import { tmpdir } from "node:os"

export interface TempDir extends AsyncDisposable {
  path: string
}

/** A fresh directory under the system temp dir, its name starting with `prefix`. */
export async function tempDir(prefix: string): Promise<TempDir> {
  const path = await mkdtemp(`${tmpdir()}/${prefix}`)
  return { path, [Symbol.asyncDispose]: () => rm(path, { recursive: true, force: true }) }
}
