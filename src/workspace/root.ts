// The workspace a delegation runs in: an existing directory, canonicalized (symlinks resolved) so
// locks and records name one directory one way.
import { realpath, stat } from "node:fs/promises"
import { isAbsolute } from "node:path"
import { fail } from "../errors"

export async function canonicalWorkspace(cwd: string): Promise<string> {
  if (!isAbsolute(cwd)) throw fail("Usage", `cwd must be an absolute path, got "${cwd}".`, "Pass the repository's absolute path as cwd.")
  const info = await stat(cwd).catch(() => undefined)
  if (!info) throw fail("Usage", `The workspace ${cwd} does not exist.`, "Pass an existing directory as cwd.")
  if (!info.isDirectory()) throw fail("Usage", `The workspace ${cwd} is not a directory.`, "Pass the repository's directory, not a file, as cwd.")
  const real = await realpath(cwd)
  if (real === "/") throw fail("Usage", "The workspace cannot be the root directory.", "Pass the repository's directory as cwd.")
  return real
}
