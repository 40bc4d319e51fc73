// What instance release and the server's recycling ask of the shared server. A request naming a
// directory boots its instance if it is not live: ask only about directories believed live (the
// session list names none).
import type { OpencodeClient } from "@opencode-ai/sdk/v2"
import { fail } from "../errors"

/** True while any session in `directory` (this program's or anyone's) is busy or retrying. */
export async function sessionRunningIn(client: OpencodeClient, directory: string): Promise<boolean> {
  const status = await client.session.status({ directory })
  if (!status.data) throw fail("Server", `OpenCode did not report the session status of ${directory}.`)
  return Object.values(status.data as Record<string, { type: string }>).some((state) => state.type !== "idle")
}

/** When any session on the server (in any directory) was last updated, epoch ms; undefined when none is kept. */
export async function lastSessionUpdate(client: OpencodeClient): Promise<number | undefined> {
  // OpenCode's global list comes newest update first: its first entry is the latest.
  const listed = await client.experimental.session.list({ limit: 1 })
  if (!listed.data) throw fail("Server", "OpenCode did not list its sessions.")
  return listed.data[0]?.time.updated
}

/** Drops the instance; OpenCode starts a new one lazily on the next request naming the directory. */
export async function disposeInstance(client: OpencodeClient, directory: string): Promise<void> {
  const result = await client.instance.dispose({ directory })
  if (result.error) throw fail("Server", `OpenCode did not dispose of its instance for ${directory}.`)
}
