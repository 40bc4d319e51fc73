// What the suite needs from the machine is installed by `bash scripts/setup.sh`; a test that finds it
// missing fails with that step instead of skipping, so a gap on a newcomer's machine is seen, not hidden.
import { existsSync } from "node:fs"

/** Throws, naming the setup step, when `path` (a file, or a command on PATH) is not on this machine. */
export function requireInstalled(path: string, what: string): string {
  const found = path.startsWith("/") ? (existsSync(path) ? path : null) : Bun.which(path)
  if (!found) throw new Error(`${path} is missing (${what}): run \`bash scripts/setup.sh\`, which installs it.`)
  return found
}
