// Keeps a disposal of a directory's instance and a turn starting there, in two MCP processes, from
// crossing: OpenCode aborts a session's message when its instance is disposed under it (a prompt being
// admitted ends cancelled). Each side writes its mark first and then looks for the other's (Dekker's
// order, on one local file system): a releaser that sees a use skips; a user that sees a release waits
// for it to end, and its requests then boot a new instance. Marks are empty files named
// `<directory hash>.<use|release>.<pid>.<n>` in one directory; a dead process's marks are removed by
// whoever finds them, and names of any other shape are ignored. A restart of the whole server
// (recycle.ts) marks a release under a key of its own that every use also waits for, and goes ahead
// only when no use of any directory is marked.
import { createHash } from "node:crypto"
import { mkdir, readdir, rm, writeFile } from "node:fs/promises"
import { alive } from "../../util/process"

type Kind = "use" | "release"
const MARK = /^([0-9a-f]{32})\.(use|release)\.(\d+)\.(\d+)$/
/** A release is two requests to the server; past this a user goes on rather than wait for ever. */
const RELEASE_WAIT_MS = 10_000
const POLL_MS = 25

/** The whole server's key: no directory's hash is all zeros in practice. */
const SERVER_KEY = "0".repeat(32)

const keyOf = (directory: string) => createHash("sha256").update(directory).digest("hex").slice(0, 32)

export class InstanceMarks {
  private counter = 0

  constructor(private readonly dir: string) {}

  /** Marks `directory` in use, once no release there is under way; the returned function unmarks it. */
  async use(directory: string): Promise<() => Promise<void>> {
    const key = keyOf(directory)
    const file = await this.mark(key, "use")
    const until = Date.now() + RELEASE_WAIT_MS
    while (Date.now() < until && (await this.live(key, "release")) + (await this.live(SERVER_KEY, "release")) > 0)
      await Bun.sleep(POLL_MS)
    return () => rm(file, { force: true })
  }

  /** Runs `release` unless `directory` is marked in use; no use starts there until it has ended. */
  releasing(directory: string, release: () => Promise<boolean>): Promise<boolean> {
    const key = keyOf(directory)
    return this.releasingUnder(key, key, release)
  }

  /** Runs `release` (the whole server's) unless any directory is marked in use; no use starts until it ends. */
  releasingServer(release: () => Promise<boolean>): Promise<boolean> {
    return this.releasingUnder(SERVER_KEY, undefined, release)
  }

  /** Marks a release under `key`, then runs it unless a use is marked under `uses` (any key when undefined). */
  private async releasingUnder(key: string, uses: string | undefined, release: () => Promise<boolean>) {
    const file = await this.mark(key, "release")
    try {
      if ((await this.live(uses, "use")) > 0) return false
      return await release()
    } finally {
      await rm(file, { force: true })
    }
  }

  private async mark(key: string, kind: Kind): Promise<string> {
    await mkdir(this.dir, { recursive: true, mode: 0o700 })
    const file = `${this.dir}/${key}.${kind}.${process.pid}.${this.counter++}`
    await writeFile(file, "", { mode: 0o600 })
    return file
  }

  /** Marks of `kind` on `key` (on any key when undefined) held by live processes. */
  private async live(key: string | undefined, kind: Kind): Promise<number> {
    let count = 0
    // No marks directory yet: no marks.
    for (const name of await readdir(this.dir).catch(() => [] as string[])) {
      const match = MARK.exec(name)
      if (!match || (key !== undefined && match[1] !== key) || match[2] !== kind) continue
      // A SIGKILLed process's mark: its running session, if any, is still seen as busy by the server.
      if (alive(Number(match[3]))) count++
      else await rm(`${this.dir}/${name}`, { force: true })
    }
    return count
  }
}
