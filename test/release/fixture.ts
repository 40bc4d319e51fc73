// Test fixtures for install.sh: a minimal ustar writer (so a test can put any name, type or link
// target in an archive — GNU tar itself refuses to write most malicious ones), a fake release
// directory, and a loopback HTTP server that serves release directories.
import { chmod, mkdir, mkdtemp, readdir, rm, stat } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join, relative } from "node:path"

export interface TarEntry {
  name: string
  /** "0" file, "5" directory, "2" symlink, "1" hardlink. */
  type: "0" | "1" | "2" | "5"
  body?: string
  linkname?: string
  mode?: number
}

function field(header: Uint8Array, offset: number, length: number, value: string) {
  const bytes = new TextEncoder().encode(value)
  if (bytes.length > length) throw new Error(`tar field too long: ${value}`)
  header.set(bytes, offset)
}

const octal = (value: number, length: number) => `${value.toString(8).padStart(length - 1, "0")}\0`

/** A gzip-compressed ustar archive holding exactly the given entries, in order. */
export function tarGz(entries: TarEntry[]): Uint8Array {
  const blocks: Uint8Array[] = []
  for (const entry of entries) {
    const body = new TextEncoder().encode(entry.body ?? "")
    const header = new Uint8Array(512)
    field(header, 0, 100, entry.name)
    field(header, 100, 8, octal(entry.mode ?? (entry.type === "5" ? 0o755 : 0o644), 8))
    field(header, 108, 8, octal(0, 8))
    field(header, 116, 8, octal(0, 8))
    field(header, 124, 12, octal(entry.type === "0" ? body.length : 0, 12))
    field(header, 136, 12, octal(1_700_000_000, 12))
    field(header, 148, 8, "        ")
    field(header, 156, 1, entry.type)
    field(header, 157, 100, entry.linkname ?? "")
    field(header, 257, 8, "ustar\u000000")
    const sum = header.reduce((total, byte) => total + byte, 0)
    field(header, 148, 8, `${sum.toString(8).padStart(6, "0")}\0 `)
    blocks.push(header)
    if (entry.type === "0" && body.length > 0) {
      const padded = new Uint8Array(Math.ceil(body.length / 512) * 512)
      padded.set(body)
      blocks.push(padded)
    }
  }
  blocks.push(new Uint8Array(1024))
  return Bun.gzipSync(Buffer.concat(blocks))
}

export const sha256 = (bytes: Uint8Array | string) => new Bun.CryptoHasher("sha256").update(bytes).digest("hex")

/**
 * A stand-in for the binary: records its arguments and whether stdin was a terminal under
 * `$XDG_DATA_HOME/opencode-mcp-orchestrator/current/`, the way the real `install` lands there.
 */
export function fakeBinary(version: string) {
  return `#!/bin/sh
set -eu
dir="\${XDG_DATA_HOME:-$HOME/.local/share}/opencode-mcp-orchestrator/current"
mkdir -p "$dir"
printf '%s\\n' "$@" > "$dir/args"
printf '%s\\n' '${version}' > "$dir/version"
`
}

/** The entries of a well-formed release archive for `stem`, with the fake binary inside. */
export function goodEntries(stem: string, version: string): TarEntry[] {
  return [
    { name: `${stem}/`, type: "5" },
    { name: `${stem}/README.md`, type: "0", body: "readme\n" },
    { name: `${stem}/opencode-mcp-orchestrator`, type: "0", body: fakeBinary(version), mode: 0o755 },
  ]
}

export async function tempDir(prefix: string) {
  return mkdtemp(join(tmpdir(), `${prefix}-`))
}

/** Every path under `root` with its type and size: compared before/after to prove nothing changed. */
export async function listing(root: string): Promise<string[]> {
  const out: string[] = []
  const walk = async (dir: string) => {
    for (const name of (await readdir(dir)).sort()) {
      const path = join(dir, name)
      const info = await stat(path).catch(() => undefined)
      out.push(`${relative(root, path)} ${info?.isDirectory() ? "dir" : (info?.size ?? "dangling")}`)
      if (info?.isDirectory()) await walk(path)
    }
  }
  await walk(root)
  return out
}

/** Serves files under `root` on 127.0.0.1 (GET /<path>); 404 for anything else. */
export function serveDirectory(root: string) {
  const server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    async fetch(request) {
      const path = decodeURIComponent(new URL(request.url).pathname)
      if (path.includes("..")) return new Response("no", { status: 400 })
      const file = Bun.file(join(root, path))
      return (await file.exists()) ? new Response(file) : new Response("not found", { status: 404 })
    },
  })
  return { url: `http://127.0.0.1:${server.port}`, stop: () => server.stop(true) }
}

/** A directory with a `uname` that reports `machine` for -m and Linux for -s, to put first on PATH. */
export async function unameShim(root: string, machine: string) {
  const dir = join(root, `uname-${machine}`)
  await mkdir(dir, { recursive: true })
  await Bun.write(join(dir, "uname"), `#!/bin/sh\ncase "\${1:-}" in -m) echo ${machine} ;; *) echo Linux ;; esac\n`)
  await chmod(join(dir, "uname"), 0o755)
  return dir
}

export async function removeAll(...paths: string[]) {
  for (const path of paths) await rm(path, { recursive: true, force: true })
}
