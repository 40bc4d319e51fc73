// A plain `opencode serve`, none of this program's protections around it: the control that shows an
// attack on the shared server is real. It runs on a home's environment without the shared server's own
// variables (its marker, no project config), logs to `logFile`, and is found by the URL it prints.
import { existsSync, readFileSync } from "node:fs"
import type { Env } from "../../src/config/flags"
import { SHARED_SERVER_ENV } from "../../src/opencode/server"
import { spawn, type Spawned } from "../../src/util/process"
import { ROOT } from "./mcp"
import { until } from "./until"

export interface PlainServe {
  server: Spawned
  /** Where it listens; undefined when it printed no address within 30 s (the caller asserts it). */
  url: string | undefined
}

/** Starts it with `env` over the home's; `homeEnv` is filtered of the shared server's variables. */
export async function plainServe(homeEnv: Env, logFile: string, env: Env): Promise<PlainServe> {
  const base = Object.fromEntries(Object.entries(homeEnv).filter(([name]) => !(name in SHARED_SERVER_ENV)))
  const argv = ["serve", "--port", "0", "--hostname", "127.0.0.1", "--print-logs", "--log-level", "WARN"]
  const server = spawn([`${ROOT}/node_modules/.bin/opencode`, ...argv], { env: { ...base, ...env }, logFile })
  let url: string | undefined
  await until(() => {
    url = (existsSync(logFile) ? readFileSync(logFile, "utf8") : "").match(
      /listening on (http:\/\/127\.0\.0\.1:\d+)/,
    )?.[1]
    return url !== undefined
  }, 30_000)
  return { server, url }
}
