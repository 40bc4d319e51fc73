// One way for a test to run git on a fixture: no system or user config, a fixed identity, and the
// command's failure thrown with git's own words (a fixture that did not commit is a broken test).
import { run } from "../../src/util/process"

export const GIT_ENV = {
  PATH: "/usr/bin:/bin",
  HOME: "/nonexistent",
  GIT_CONFIG_NOSYSTEM: "1",
  GIT_CONFIG_GLOBAL: "/dev/null",
}

const IDENTITY = ["-c", "user.name=t", "-c", "user.email=t@localhost"]

/** `git args…` in `cwd`; its stdout. */
export async function git(cwd: string, ...args: string[]): Promise<string> {
  const result = await run(["git", ...IDENTITY, ...args], { cwd, env: GIT_ENV })
  if (result.code !== 0) throw new Error(`git ${args.join(" ")}: ${result.stderr}`)
  return result.stdout
}

/** Stages everything in `cwd` and commits it. */
export async function commitAll(cwd: string, message: string) {
  await git(cwd, "add", "-A")
  await git(cwd, "commit", "-qm", message)
}

/** A repository at `dir` (which exists) holding `files`, all committed. */
export async function commitRepo(dir: string, files: Record<string, string>, message = "base"): Promise<string> {
  for (const [path, content] of Object.entries(files)) await Bun.write(`${dir}/${path}`, content)
  await git(dir, "init", "-q")
  await commitAll(dir, message)
  return dir
}
