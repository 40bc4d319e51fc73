// The two calls instance release needs from the shared server. Both name a directory, and any request
// naming one boots its instance if it is not live: ask only about directories believed live.
import type { OpencodeClient } from "@opencode-ai/sdk/v2"
import { fail } from "../errors"

/** True while any session in `directory` (this program's or anyone's) is busy or retrying. */
export async function sessionRunningIn(client: OpencodeClient, directory: string): Promise<boolean> {
  const status = await client.session.status({ directory })
  if (!status.data) throw fail("Server", `OpenCode did not report the session status of ${directory}.`)
  return Object.values(status.data as Record<string, { type: string }>).some((state) => state.type !== "idle")
}

/** Drops the instance; OpenCode starts a new one lazily on the next request naming the directory. */
export async function disposeInstance(client: OpencodeClient, directory: string): Promise<void> {
  const result = await client.instance.dispose({ directory })
  if (result.error) throw fail("Server", `OpenCode did not dispose of its instance for ${directory}.`)
}
