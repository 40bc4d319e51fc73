// A repository as bytes: every path below it (Git metadata aside) with its mode and content hash, so
// "before or after, byte for byte" is one comparison; and the temporaries and staging an apply may leave.
import { createHash } from "node:crypto"
import { lstatSync, readdirSync, readFileSync, readlinkSync } from "node:fs"

/** `path mode sha256` for every entry below `root` except `.git`, sorted. */
export function listing(root: string): string[] {
  const lines: string[] = []
  const walk = (rel: string) => {
    for (const name of readdirSync(rel ? `${root}/${rel}` : root)) {
      const path = rel ? `${rel}/${name}` : name
      if (path === ".git") continue
      const info = lstatSync(`${root}/${path}`)
      const mode = (info.mode & 0o170777).toString(8)
      if (info.isDirectory()) {
        lines.push(`${path}/ ${mode}`)
        walk(path)
      } else {
        const bytes = info.isSymbolicLink()
          ? Buffer.from(readlinkSync(`${root}/${path}`))
          : readFileSync(`${root}/${path}`)
        lines.push(`${path} ${mode} ${createHash("sha256").update(bytes).digest("hex")}`)
      }
    }
  }
  walk("")
  return lines.sort()
}

/** Every entry below `root` (Git metadata included) whose name matches `pattern`. */
export function namesBelow(root: string, pattern: RegExp): string[] {
  const entries = readdirSync(root, { recursive: true, encoding: "utf8" }) as string[]
  return entries.filter((entry) => pattern.test(entry.split("/").at(-1) ?? ""))
}

/** An apply's temporaries. */
export const TEMPS = /^\.oc-orch-/
/** An apply's staging directories. */
export const STAGING = /^apply-[0-9a-f]{8}$/
