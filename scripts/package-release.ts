// Builds a release into release/: one .tar.gz per architecture, SHA256SUMS, a CycloneDX SBOM and
// install.sh rendered for the repository. Archives are reproducible (see scripts/release/archive.ts).
//   bun scripts/package-release.ts --version 0.1.0 --repository OWNER/NAME
//     [--host-only]   only the host architecture (tests; a release needs both)
//     [--skip-build]  package the binaries already in dist/ (their --version must match)
//     [--out DIR]     instead of release/
import { mkdtemp, readdir, rm, mkdir, chmod, stat, exists } from "node:fs/promises"
import { tmpdir } from "node:os"
import { parseArgs } from "node:util"
import { run } from "../src/util/process"
import { listArchive, requireGnuTar, sha256File, writeArchive } from "./release/archive"
import {
  type Arch,
  APP,
  ARCHES,
  INSTALL_TEMPLATE,
  archiveName,
  checkRepository,
  checkVersion,
  formatChecksums,
  renderInstallScript,
  sbomName,
  stemOf,
} from "./release/assets"
import { keyChain, parseBunLock } from "./release/lockfile"
import { buildSbom, serializeSbom, validateSbom } from "./release/sbom"

const root = `${import.meta.dir}/..`
const started = performance.now()

class ReleaseError extends Error {}

/** Stops packaging with a one-line reason (exit 9); thrown, so the work dir is still removed. */
function fail(message: string): never {
  throw new ReleaseError(message)
}

process.on("uncaughtException", (error) => {
  console.error(`package-release: ${error instanceof ReleaseError ? error.message : error}`)
  process.exit(9)
})

const { values } = parseArgs({
  options: {
    version: { type: "string" },
    repository: { type: "string" },
    "host-only": { type: "boolean" },
    "skip-build": { type: "boolean" },
    out: { type: "string" },
  },
})
let version: string
let repository: string
try {
  version = checkVersion(values.version)
  repository = checkRepository(values.repository)
  await requireGnuTar()
} catch (error) {
  fail((error as Error).message)
}
const hostArch: Arch = process.arch === "arm64" ? "arm64" : "x64"
const arches: readonly Arch[] = values["host-only"] ? [hostArch] : ARCHES
const outDir = values.out ?? `${root}/release`

if (!values["skip-build"]) {
  const build = await run(
    ["bun", "scripts/build.ts", "--version", version, ...(values["host-only"] ? ["--host-only"] : [])],
    { cwd: root },
  )
  if (build.code !== 0) fail(`build failed:\n${build.stdout}${build.stderr}`)
}

// ELF e_machine at offset 18: the binary for each archive must be built for that architecture.
const MACHINE: Record<Arch, number> = { x64: 0x3e, arm64: 0xb7 }
async function checkBinary(arch: Arch, path: string) {
  if (!(await exists(path))) fail(`${path} is missing; run without --skip-build`)
  const head = new Uint8Array(await Bun.file(path).slice(0, 20).arrayBuffer())
  const machine = head[18]! | (head[19]! << 8)
  if (head[0] !== 0x7f || head[1] !== 0x45 || machine !== MACHINE[arch])
    fail(`${path} is not a linux-${arch} ELF binary`)
  if (arch !== hostArch) return
  const printed = await run([path, "--version"], { timeoutMs: 30_000 })
  if (printed.stdout.trim() !== version)
    fail(`${path} --version printed '${printed.stdout.trim()}', expected ${version}`)
}

// A fixed mtime for every entry: SOURCE_DATE_EPOCH when the caller sets it, else the commit time.
async function releaseTime() {
  const fromEnv = process.env.SOURCE_DATE_EPOCH
  if (fromEnv && /^\d+$/.test(fromEnv)) return Number(fromEnv)
  const git = await run(["git", "log", "-1", "--format=%ct"], { cwd: root })
  return git.code === 0 && /^\d+$/.test(git.stdout.trim()) ? Number(git.stdout.trim()) : 0
}

await rm(outDir, { recursive: true, force: true })
await mkdir(outDir, { recursive: true })
const workDir = await mkdtemp(`${tmpdir()}/package-release-`)
const mtime = await releaseTime()
const docs = [
  { name: "README.md", source: `${root}/README.md` },
  { name: "LICENSE", source: `${root}/LICENSE` },
]
try {
  for (const arch of arches) {
    const binary = `${root}/dist/${APP}-linux-${arch}`
    await checkBinary(arch, binary)
    const entries = [{ name: APP, source: binary, executable: true }]
    // The licence and the README ship with every archive; a missing one stops the release.
    for (const doc of docs) {
      if (!(await exists(doc.source))) fail(`${doc.source} is missing: every release archive carries it`)
      entries.push({ ...doc, executable: false })
    }
    const stem = stemOf(version, arch)
    const path = await writeArchive({ workDir, outDir, stem, entries, mtime })
    // Read back what was written: one top-level dir, only files and dirs, owner 0/0, the one mtime.
    const listed = await listArchive(path)
    const expected = [`${stem}/`, ...entries.map((entry) => `${stem}/${entry.name}`).sort()]
    if (JSON.stringify(listed.map((entry) => entry.name)) !== JSON.stringify(expected))
      fail(`${path} lists ${listed.map((entry) => entry.name).join(", ")}, expected ${expected.join(", ")}`)
    for (const entry of listed)
      if (!"-d".includes(entry.type) || entry.owner !== "0/0")
        fail(`${path}: unexpected entry ${entry.mode} ${entry.owner} ${entry.name}`)
  }

  const lock = parseBunLock(await Bun.file(`${root}/bun.lock`).text())
  const bom = buildSbom({
    lock,
    version,
    repository,
    bunVersion: Bun.version,
    timestamp: mtime,
    readManifest: (pkg) => {
      try {
        return require(`${root}/node_modules/${keyChain(pkg.key).join("/node_modules/")}/package.json`) as Record<
          string,
          unknown
        >
      } catch {
        return undefined
      }
    },
    toolManifest: require("@cyclonedx/cyclonedx-library/package.json") as Record<string, unknown>,
  })
  const sbom = serializeSbom(bom)
  const invalid = await validateSbom(sbom)
  if (invalid) fail(`the SBOM does not validate against CycloneDX 1.6: ${JSON.stringify(invalid).slice(0, 500)}`)
  await Bun.write(`${outDir}/${sbomName(version)}`, sbom)

  const script = renderInstallScript(await Bun.file(INSTALL_TEMPLATE).text(), repository, version)
  await Bun.write(`${outDir}/install.sh`, script)
  await chmod(`${outDir}/install.sh`, 0o755)

  const names = (await readdir(outDir)).filter((name) => name !== "SHA256SUMS")
  const sums = await Promise.all(names.map(async (name) => ({ name, sha256: await sha256File(`${outDir}/${name}`) })))
  await Bun.write(`${outDir}/SHA256SUMS`, formatChecksums(sums))

  for (const name of [...names, "SHA256SUMS"].sort()) {
    const size = (await stat(`${outDir}/${name}`)).size
    console.log(`${(size / 1024 / 1024).toFixed(1).padStart(7)} MiB  ${name}`)
  }
  console.log(
    `release ${version} for ${repository} (${arches.map((arch) => archiveName(version, arch)).join(", ")}) in ` +
      `${((performance.now() - started) / 1000).toFixed(1)} s`,
  )
} finally {
  await rm(workDir, { recursive: true, force: true })
}
