// A `serve --http` process a test starts and stops: resolved once it says on stderr where it serves, with
// the bearer token it keeps in its state dir. The HTTP tests start it from source, the Codex one as the
// compiled binary.
import { readFile } from "node:fs/promises"
import type { Env } from "../../src/config/flags"

export interface HttpServe {
  url: string
  token: string
  stop(): Promise<void>
}

/** Starts `command` (a `serve --http …`) with `env`; its token is read from `stateDir` (this program's state dir). */
export async function startHttpServe(command: string[], env: Env, stateDir: string): Promise<HttpServe> {
  const child = Bun.spawn(command, { env, stdin: "ignore", stdout: "ignore", stderr: "pipe" })
  const reader = child.stderr.getReader()
  let said = ""
  for (let chunk = await reader.read(); !chunk.done; chunk = await reader.read()) {
    said += new TextDecoder().decode(chunk.value)
    if (said.includes("\n")) break
  }
  reader.releaseLock()
  const url = /serving MCP on (\S+)/.exec(said)?.[1]
  if (!url) {
    child.kill()
    throw new Error(`serve --http did not start: ${said}`)
  }
  const token = (await readFile(`${stateDir}/http-token`, "utf8")).trim()
  return {
    url,
    token,
    stop: async () => {
      child.kill("SIGTERM")
      await child.exited
    },
  }
}
