// install.sh under dash against releases served from 127.0.0.1, with a stand-in binary: what it
// installs, which flags reach `install`, and every refusal stopping before HOME changes.
import { afterAll, beforeAll, describe, expect, test } from "bun:test"
import { mkdir, readdir, rm, symlink } from "node:fs/promises"
import { join } from "node:path"
import { INSTALL_TEMPLATE, archiveName, renderInstallScript, stemOf } from "../../scripts/release/assets"
import { run } from "../../src/util/process"
import { requireInstalled } from "../helpers/installed"
import {
  type TarEntry,
  goodEntries,
  listing,
  removeAll,
  serveDirectory,
  sha256,
  tarGz,
  tempDir,
  unameShim,
} from "./fixture"

const VERSION = "0.1.0"
const STEM = stemOf(VERSION, "x64")
const ARCHIVE = archiveName(VERSION, "x64")
let root: string
let server: ReturnType<typeof serveDirectory>
let template: string
let shimX64: string

beforeAll(async () => {
  root = await tempDir("install-sh")
  server = serveDirectory(join(root, "srv"))
  template = await Bun.file(INSTALL_TEMPLATE).text()
  shimX64 = await unameShim(root, "x86_64")
})
afterAll(async () => {
  server.stop()
  await removeAll(root)
})

/** Writes a release named `name` to the server: install.sh, the archive and SHA256SUMS. */
async function publish(name: string, options: { version?: string; archive?: Uint8Array; sums?: string } = {}) {
  const version = options.version ?? VERSION
  const dir = join(root, "srv", name)
  await mkdir(dir, { recursive: true })
  const archive = options.archive ?? tarGz(goodEntries(stemOf(version, "x64"), version))
  await Bun.write(join(dir, archiveName(version, "x64")), archive)
  await Bun.write(join(dir, "SHA256SUMS"), options.sums ?? `${sha256(archive)}  ${archiveName(version, "x64")}\n`)
  await Bun.write(join(dir, "install.sh"), renderInstallScript(template, "acme/orch", version))
  return { base: `${server.url}/${name}`, script: join(dir, "install.sh") }
}

let homes = 0
async function cleanHome() {
  const home = join(root, `home-${++homes}`)
  const tmp = join(root, `tmp-${homes}`)
  await mkdir(join(home, ".config"), { recursive: true })
  await mkdir(tmp)
  await Bun.write(join(home, ".config", "keep.json"), "{}")
  return { home, tmp }
}

async function install(
  release: { base: string; script: string },
  where: { home: string; tmp: string },
  args: string[],
  shim = shimX64,
  // setsid: no controlling terminal, so /dev/tty cannot open, as under curl | sh in CI.
  command = [SETSID, "-w", DASH, release.script, ...args],
) {
  return run(command, {
    env: {
      // A shim list with ":" is the whole PATH (tests that take tools away); otherwise it goes first.
      PATH: shim.includes(":") ? shim : `${shim}:${process.env.PATH}`,
      HOME: where.home,
      XDG_CONFIG_HOME: join(where.home, ".config"),
      XDG_DATA_HOME: join(where.home, ".local", "share"),
      XDG_STATE_HOME: join(where.home, ".local", "state"),
      XDG_CACHE_HOME: join(where.home, ".cache"),
      TMPDIR: where.tmp,
      OPENCODE_MCP_ORCHESTRATOR_RELEASE_BASE: release.base,
    },
    timeoutMs: 30_000,
  })
}

// Resolved once from the test's own PATH: some tests hand install.sh a PATH without them.
const SETSID = Bun.which("setsid")!
const DASH = Bun.which("dash")!

const current = (home: string) => join(home, ".local", "share", "opencode-mcp-orchestrator", "current")

describe("install.sh installs", () => {
  test("verifies, extracts and runs `install --yes` with the caller's flags", async () => {
    const release = await publish("good")
    const where = await cleanHome()
    const result = await install(release, where, ["--yes", "--models", "local/m", "--integrations", "codex"])
    expect(result.stderr).toBe("")
    expect(result.code).toBe(0)
    expect(result.stdout).toContain("Checksum verified")
    expect(await Bun.file(join(current(where.home), "args")).text()).toBe(
      "install\n--yes\n--models\nlocal/m\n--integrations\ncodex\n",
    )
    expect(await readdir(where.tmp)).toEqual([])
  })

  test("adds --yes when nobody can answer (no terminal, no /dev/tty)", async () => {
    const release = await publish("no-tty")
    const where = await cleanHome()
    const result = await install(release, where, ["--models", "local/m"])
    expect(result.code).toBe(0)
    expect(await Bun.file(join(current(where.home), "args")).text()).toBe("install\n--yes\n--models\nlocal/m\n")
  })

  test("with a terminal the installer runs interactively: no --yes is added", async () => {
    const release = await publish("tty")
    const where = await cleanHome()
    // script(1) gives install.sh a pseudo-terminal as stdin, as when a person runs it.
    const result = await install({ ...release, script: "" }, where, [], shimX64, [
      "script",
      "-qec",
      `dash ${release.script} --models local/m`,
      "/dev/null",
    ])
    expect(result.code).toBe(0)
    expect(await Bun.file(join(current(where.home), "args")).text()).toBe("install\n--models\nlocal/m\n")
  })

  test("a link to a file inside the archive is accepted", async () => {
    const archive = tarGz([...goodEntries(STEM, VERSION), { name: `${STEM}/docs`, type: "2", linkname: "README.md" }])
    const result = await install(await publish("inner-link", { archive }), await cleanHome(), ["--yes"])
    expect(result.stderr).toBe("")
    expect(result.code).toBe(0)
  })

  test("an older release's install.sh installs that release over a newer one", async () => {
    const newer = await publish("v0.1.0")
    const older = await publish("v0.0.9", { version: "0.0.9" })
    const where = await cleanHome()
    expect((await install(newer, where, ["--yes"])).code).toBe(0)
    expect(await Bun.file(join(current(where.home), "version")).text()).toBe("0.1.0\n")
    const result = await install(older, where, ["--yes"])
    expect(result.code).toBe(0)
    expect(result.stdout).toContain("opencode-mcp-orchestrator 0.0.9 for linux-x64")
    expect(await Bun.file(join(current(where.home), "version")).text()).toBe("0.0.9\n")
  })

  test("downloads with wget when curl is missing, and says so when neither is there", async () => {
    requireInstalled("wget", "the second downloader install.sh tries")
    const release = await publish("wget")
    // A PATH holding only what install.sh and the stand-in binary use, without curl.
    const bin = join(root, "bin-no-curl")
    await mkdir(bin, { recursive: true })
    for (const tool of ["tar", "gzip", "mktemp", "awk", "sha256sum", "rm", "mkdir", "chmod", "head", "cat", "wget"])
      await symlink(Bun.which(tool)!, join(bin, tool)).catch(() => undefined)
    const where = await cleanHome()
    const viaWget = await install(release, where, ["--yes"], `${shimX64}:${bin}`)
    expect(viaWget.stderr).toBe("")
    expect(viaWget.code).toBe(0)
    await rm(join(bin, "wget"))
    const neither = await install(release, await cleanHome(), ["--yes"], `${shimX64}:${bin}`)
    expect(neither.stderr).toBe("install.sh: curl or wget is required but neither was found on PATH\n")
  })

  test("aarch64 picks the arm64 archive", async () => {
    const release = await publish("arm")
    const where = await cleanHome()
    const result = await install(release, where, ["--yes"], await unameShim(root, "aarch64"))
    expect(result.code).not.toBe(0)
    expect(result.stderr).toBe(`install.sh: download failed: ${release.base}/${stemOf(VERSION, "arm64")}.tar.gz\n`)
  })
})

const good = () => goodEntries(STEM, VERSION)
const withEntries = (...extra: TarEntry[]) => tarGz([...good(), ...extra])
const refusals: { name: string; release: () => Parameters<typeof publish>[1]; machine?: string; reason: RegExp }[] = [
  {
    name: "tampered archive",
    release: () => ({
      sums: `${sha256(tarGz(good()))}  ${ARCHIVE}\n`,
      archive: withEntries({ name: `${STEM}/extra`, type: "0", body: "x" }),
    }),
    reason: /checksum mismatch for/,
  },
  {
    name: "checksum line for other content",
    release: () => ({ sums: `${sha256("other")}  ${ARCHIVE}\n` }),
    reason: /checksum mismatch/,
  },
  {
    name: "no line for the archive",
    release: () => ({ sums: `${sha256(tarGz(good()))}  other.tar.gz\n` }),
    reason: /exactly one well-formed line/,
  },
  {
    name: "two lines for the archive",
    release: () => ({ sums: `${sha256(tarGz(good()))}  ${ARCHIVE}\n`.repeat(2) }),
    reason: /exactly one well-formed line/,
  },
  {
    name: "malformed hash",
    release: () => ({ sums: `${sha256(tarGz(good())).slice(1)}  ${ARCHIVE}\n` }),
    reason: /exactly one well-formed line/,
  },
  {
    name: "'..' entry",
    release: () => ({ archive: withEntries({ name: `${STEM}/../../evil`, type: "0", body: "x" }) }),
    reason: /".." component/,
  },
  {
    name: "absolute path",
    release: () => ({ archive: withEntries({ name: "/tmp/evil", type: "0", body: "x" }) }),
    reason: /absolute path/,
  },
  {
    name: "symlink leaving the dir",
    release: () => ({ archive: withEntries({ name: `${STEM}/link`, type: "2", linkname: "../../.." }) }),
    reason: /link .* leaves the extraction directory/,
  },
  {
    name: "symlink to an absolute path",
    release: () => ({ archive: withEntries({ name: `${STEM}/link`, type: "2", linkname: "/etc" }) }),
    reason: /leaves the extraction directory \(absolute path\)/,
  },
  {
    name: "hardlink leaving the dir",
    release: () => ({ archive: withEntries({ name: `${STEM}/hard`, type: "1", linkname: "../etc/passwd" }) }),
    reason: /Removing leading/,
  },
  {
    name: "entry outside the top-level dir",
    release: () => ({ archive: withEntries({ name: "other/file", type: "0", body: "x" }) }),
    reason: /outside the top-level directory/,
  },
  {
    name: "not a tar archive",
    release: () => ({ archive: new TextEncoder().encode("<html>not found</html>") }),
    reason: /not a gzip-compressed tar archive/,
  },
  {
    name: "archive without the binary",
    release: () => ({ archive: tarGz(good().slice(0, 2)) }),
    reason: /has no .*\/opencode-mcp-orchestrator binary/,
  },
  {
    name: "unsupported architecture",
    release: () => ({}),
    machine: "riscv64",
    reason: /unsupported architecture 'riscv64'/,
  },
]

describe("install.sh refuses, changing nothing in HOME, with one line", () => {
  for (const refusal of refusals)
    test(refusal.name, async () => {
      const release = await publish(`bad-${refusal.name.replaceAll(/\W+/g, "-")}`, refusal.release())
      const where = await cleanHome()
      // An existing installation must survive a refused update untouched.
      expect((await install(await publish("base"), where, ["--yes"])).code).toBe(0)
      const before = await listing(where.home)
      const shim = refusal.machine ? await unameShim(root, refusal.machine) : shimX64
      const result = await install(release, where, ["--yes"], shim)
      expect(result.code).not.toBe(0)
      expect(result.stderr).toMatch(/^install\.sh: [^\n]+\n$/)
      expect(result.stderr).toMatch(refusal.reason)
      expect(await listing(where.home)).toEqual(before)
      expect(await readdir(where.tmp)).toEqual([])
    })
})
