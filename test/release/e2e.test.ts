// The whole release path with the real compiled binary: package-release (host arch) writes
// release/, a loopback server serves it, and install.sh runs under sh in a clean HOME, twice.
import { afterAll, beforeAll, describe, expect, test } from "bun:test"
import { exists, mkdir, readdir } from "node:fs/promises"
import { join } from "node:path"
import pkg from "../../package.json"
import { APP, archiveName, sbomName, stemOf } from "../../scripts/release/assets"
import { run } from "../../src/util/process"
import { listing, removeAll, serveDirectory, tempDir } from "./fixture"

const root = join(import.meta.dir, "..", "..")
const version = pkg.version
const arch = process.arch === "arm64" ? "arm64" : "x64"
let work: string
let release: string
let server: ReturnType<typeof serveDirectory>
let packaged: Awaited<ReturnType<typeof run>>

beforeAll(async () => {
  work = await tempDir("release-e2e")
  release = join(work, "release")
  // `bun run test` has just built dist/ for this version; reuse it rather than compile again.
  const built = await exists(join(root, "dist", `${APP}-linux-${arch}`))
  packaged = await run(
    [
      "bun",
      "scripts/package-release.ts",
      "--version",
      version,
      "--repository",
      "acme/orch",
      "--host-only",
      "--out",
      release,
      ...(built ? ["--skip-build"] : []),
    ],
    {
      cwd: root,
      env: { ...process.env, SOURCE_DATE_EPOCH: "1700000000" },
      timeoutMs: 300_000,
    },
  )
  server = serveDirectory(release)
}, 320_000)

// The clean HOME ends up holding OpenCode's npm cache and plugin install: thousands of files.
afterAll(async () => {
  server?.stop()
  await removeAll(work)
}, 120_000)

describe("package-release", () => {
  test("writes the archive, SHA256SUMS, SBOM and install.sh", async () => {
    expect(packaged.stderr).toBe("")
    expect(packaged.code).toBe(0)
    expect((await readdir(release)).sort()).toEqual(
      ["SHA256SUMS", archiveName(version, arch), sbomName(version), "install.sh"].sort(),
    )
    const check = await run(["sha256sum", "--check", "--strict", "SHA256SUMS"], { cwd: release })
    expect(check.code).toBe(0)
    expect(check.stdout.trim().split("\n")).toHaveLength(3)
  })

  test("the archive is one top-level dir of files owned by 0/0 with one mtime", async () => {
    const listed = await run(["tar", "--full-time", "--numeric-owner", "-tvzf", archiveName(version, arch)], {
      cwd: release,
    })
    const lines = listed.stdout.trim().split("\n")
    const stem = stemOf(version, arch)
    expect(lines.map((line) => line.split(/\s+/).slice(5).join(" "))).toEqual([
      `${stem}/`,
      `${stem}/LICENSE`,
      `${stem}/README.md`,
      `${stem}/${APP}`,
    ])
    for (const line of lines) expect(line).toMatch(/^(-rw-r--r--|-rwxr-xr-x|drwxr-xr-x) 0\/0 +\d+ 2023-11-14 22:13:20 /)
  })

  test("the archive's LICENSE is the MIT licence package.json declares, byte for byte the repository's", async () => {
    const stem = stemOf(version, arch)
    const shipped = await run(["tar", "-xzOf", archiveName(version, arch), `${stem}/LICENSE`], { cwd: release })
    expect(shipped.code).toBe(0)
    expect(pkg.license).toBe("MIT")
    expect(shipped.stdout.split("\n")[0]).toBe("MIT License")
    expect(shipped.stdout).toBe(await Bun.file(join(root, "LICENSE")).text())
  })

  test("install.sh is rendered for the repository and version", async () => {
    const script = await Bun.file(join(release, "install.sh")).text()
    expect(script).toContain(`https://github.com/acme/orch/releases/download/v${version}`)
    expect(script).not.toContain("@@")
  })

  test("the SBOM names the release and the runtime dependencies, not the dev ones", async () => {
    const sbom = (await Bun.file(join(release, sbomName(version))).json()) as {
      metadata: { component: { version: string } }
      components: { name: string; group?: string }[]
    }
    expect(sbom.metadata.component.version).toBe(version)
    const names = sbom.components.map((component) =>
      component.group ? `${component.group}/${component.name}` : component.name,
    )
    expect(names).toContain("@modelcontextprotocol/server")
    expect(names).toContain("bun")
    expect(names).not.toContain("typescript")
    expect(names).not.toContain("@cyclonedx/cyclonedx-library")
  })
})

// OpenCode offline against a local provider (it bundles @ai-sdk/openai-compatible), so `install` finds a model to choose.
const opencodeConfig = JSON.stringify({
  model: "local/m",
  small_model: "local/m",
  enabled_providers: ["local"],
  provider: {
    local: {
      npm: "@ai-sdk/openai-compatible",
      options: { baseURL: "http://127.0.0.1:9/v1", apiKey: "x" },
      models: { m: { tool_call: true, limit: { context: 100000, output: 4096 } } },
    },
  },
})

describe("install.sh with the real binary", () => {
  let home: string
  let tmp: string
  const data = () => join(home, ".local", "share", APP)
  const installSh = () =>
    run(["setsid", "-w", "sh", join(release, "install.sh"), "--yes", "--models", "local/m", "--integrations", "none"], {
      env: {
        PATH: `${join(root, "node_modules", ".bin")}:/usr/local/bin:/usr/bin:/bin`,
        HOME: home,
        TMPDIR: tmp,
        OPENCODE_MCP_ORCHESTRATOR_RELEASE_BASE: server.url,
        OPENCODE_CONFIG_CONTENT: opencodeConfig,
        OPENCODE_DISABLE_AUTOUPDATE: "1",
        OPENCODE_DISABLE_MODELS_FETCH: "1",
      },
      timeoutMs: 280_000,
    })

  beforeAll(async () => {
    home = join(work, "home")
    tmp = join(work, "tmp")
    await mkdir(home)
    await mkdir(tmp)
  })

  test("installs into current/ and ends with doctor's report", async () => {
    const result = await installSh()
    expect(result.code).toBe(0)
    expect(result.stdout).toContain("Checksum verified")
    expect(result.stdout).toContain(`Installed ${version} into ${data()}/current`)
    expect(result.stdout).toMatch(new RegExp(`^ok +core: .*\\(${version.replaceAll(".", "\\.")}\\)$`, "m"))
    const installed = join(data(), "current", "bin", APP)
    expect((await run([installed, "--version"])).stdout.trim()).toBe(version)
    // install.sh's own temporary directory (mktemp -d → tmp.XXXXXXXX) is gone.
    expect((await readdir(tmp)).filter((name) => name.startsWith("tmp."))).toEqual([])
  }, 300_000)

  test("the install page's mirror command, run as written, fetches from the mirror; the variable on curl's side does not", async () => {
    // The two lines of docs/install.md's mirror example: BASE=… and curl … | VARIABLE=… sh -s -- --yes.
    const readme = await Bun.file(join(root, "docs", "install.md")).text()
    const at = readme.indexOf("    BASE=")
    const block = readme
      .slice(at, readme.indexOf("\n\n", at))
      .split("\n")
      .map((line) => line.trim())
    expect(block[1]).toContain('| OPENCODE_MCP_ORCHESTRATOR_RELEASE_BASE="$BASE" sh')
    const asWritten = `BASE=${server.url}; ${block[1]} --dry-run --models local/m --integrations none`
    const curlSide = asWritten
      .replace('| OPENCODE_MCP_ORCHESTRATOR_RELEASE_BASE="$BASE" sh', "| sh")
      .replace("curl", 'OPENCODE_MCP_ORCHESTRATOR_RELEASE_BASE="$BASE" curl')
    const shell = (command: string) =>
      run(["setsid", "-w", "sh", "-c", command], {
        env: {
          PATH: `${join(root, "node_modules", ".bin")}:/usr/local/bin:/usr/bin:/bin`,
          HOME: join(work, "mirror-home"),
          TMPDIR: tmp,
          OPENCODE_CONFIG_CONTENT: opencodeConfig,
        },
        timeoutMs: 120_000,
      })
    const mirrored = await shell(asWritten)
    expect(mirrored.stdout).toContain("Checksum verified")
    expect(mirrored.stdout).toContain("Dry run: nothing was changed.")
    expect(mirrored.code).toBe(0)
    // Control: set for curl only, install.sh never sees it and goes to the GitHub URL it was rendered with.
    const misplaced = await shell(curlSide)
    expect(misplaced.stdout).not.toContain("Checksum verified")
    expect(misplaced.code).not.toBe(0)
  }, 300_000)

  test("a second run replaces the first cleanly", async () => {
    const before = await listing(data())
    const config = await Bun.file(join(home, ".config", APP, "config.json")).json()
    const result = await installSh()
    expect(result.code).toBe(0)
    expect(result.stdout).toContain(`Found an earlier installation (${version}`)
    expect(result.stdout).toContain(`Installed ${version} into ${data()}/current`)
    expect(await listing(data())).toEqual(before)
    expect(await Bun.file(join(home, ".config", APP, "config.json")).json()).toEqual(config)
  }, 300_000)
})
