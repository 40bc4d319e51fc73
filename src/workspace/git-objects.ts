// Git's view of a path, computed here without git: a blob's id (SHA-1, as the private repository uses) and
// a path's mode. patch_apply's write step compares a target with what the snapshot held by these, and a
// collected patch records a symlink's target by its blob id. Imports only node: builtins, so the plugin's
// write step (bundled into OpenCode) can carry it.
import { createHash } from "node:crypto"
import { lstat, readlink } from "node:fs/promises"

/** A Git blob id (SHA-1, as the private repository uses) of bytes. */
export function blobId(bytes: Uint8Array | string): string {
  const data = typeof bytes === "string" ? Buffer.from(bytes) : bytes
  return createHash("sha1").update(`blob ${data.byteLength}\0`).update(data).digest("hex")
}

/** What is at a path, as git would record it: mode and blob id, or undefined when nothing is. */
export async function entryOf(path: string): Promise<{ mode: string; oid: string } | undefined> {
  const info = await lstat(path).catch(() => undefined) // absent is an answer here
  if (!info) return undefined
  if (info.isSymbolicLink()) return { mode: "120000", oid: blobId(await readlink(path)) }
  if (info.isDirectory()) return { mode: "directory", oid: "" }
  if (!info.isFile()) return { mode: "other", oid: "" }
  // Hashed as it streams: a large file costs no memory.
  const hash = createHash("sha1").update(`blob ${info.size}\0`)
  for await (const chunk of Bun.file(path).stream()) hash.update(chunk)
  return { mode: info.mode & 0o100 ? "100755" : "100644", oid: hash.digest("hex") }
}
