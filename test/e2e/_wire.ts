// What a real client and `serve` say to each other, logged on the way: a script that stands in for `serve`,
// appending every line the client sends to one file (and, when named, every line serve answers to another),
// and the logged lines read back as JSON.
import { chmod } from "node:fs/promises"
import { BINARY } from "../helpers/mcp"

/** Writes the logging stand-in for `serve` at `script` and returns it. */
export async function loggedServe(script: string, logs: { sent: string; answered?: string }): Promise<string> {
  const answered = logs.answered ? ` | tee -a '${logs.answered}'` : ""
  await Bun.write(script, `#!/bin/sh\ntee -a '${logs.sent}' | '${BINARY}' serve${answered}\n`)
  await chmod(script, 0o755)
  return script
}

/** The JSON lines logged at `path`, in order; none when nothing was logged yet. */
export async function loggedLines<T>(path: string): Promise<T[]> {
  const file = Bun.file(path)
  if (!(await file.exists())) return []
  return (await file.text())
    .split("\n")
    .filter((line) => line.trim())
    .map((line) => JSON.parse(line) as T)
}
