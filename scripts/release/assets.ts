// The pure parts of a release: argument checks, asset names, the SHA256SUMS text, and install.sh
// rendered for one repository and version.

export const APP = "opencode-mcp-orchestrator"
export const ARCHES = ["x64", "arm64"] as const
export type Arch = (typeof ARCHES)[number]

// SemVer 2.0.0 (the tag without its `v`); anything else would end up in URLs and file names.
const SEMVER =
  /^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(-[0-9A-Za-z-]+(\.[0-9A-Za-z-]+)*)?(\+[0-9A-Za-z-]+(\.[0-9A-Za-z-]+)*)?$/
// GitHub's rules for owner and repository names, which also keeps them safe inside install.sh.
const REPOSITORY = /^[A-Za-z0-9](?:[A-Za-z0-9-]{0,38})\/[A-Za-z0-9._-]{1,100}$/

export function checkVersion(version: string | undefined): string {
  if (!version) throw new Error("--version is required (e.g. --version 0.1.0)")
  if (!SEMVER.test(version)) throw new Error(`--version ${version} is not a semantic version like 0.1.0`)
  return version
}

export function checkRepository(repository: string | undefined): string {
  if (!repository) throw new Error("--repository is required (OWNER/NAME)")
  if (!REPOSITORY.test(repository) || repository.endsWith("/.") || repository.endsWith("/.."))
    throw new Error(`--repository ${repository} is not a GitHub OWNER/NAME`)
  return repository
}

/** Top-level directory inside the archive, and the archive's name without `.tar.gz`. */
export function stemOf(version: string, arch: Arch) {
  return `${APP}-${version}-linux-${arch}`
}

export function archiveName(version: string, arch: Arch) {
  return `${stemOf(version, arch)}.tar.gz`
}

export function sbomName(version: string) {
  return `${APP}-${version}.cdx.json`
}

export function releaseBase(repository: string, version: string) {
  return `https://github.com/${repository}/releases/download/v${version}`
}

/** `sha256sum` format (hash, two spaces, name), sorted by name so the file is reproducible. */
export function formatChecksums(entries: { name: string; sha256: string }[]): string {
  for (const entry of entries)
    if (!/^[0-9a-f]{64}$/.test(entry.sha256) || /[\s/]/.test(entry.name))
      throw new Error(`bad checksum entry ${entry.name}`)
  const sorted = [...entries].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
  return sorted.map((entry) => `${entry.sha256}  ${entry.name}\n`).join("")
}

/** The install.sh template; scripts run from source, so it is read from beside this file. */
export const INSTALL_TEMPLATE = `${import.meta.dir}/install.sh`

export function renderInstallScript(source: string, repository: string, version: string): string {
  checkRepository(repository)
  checkVersion(version)
  const values: Record<string, string> = {
    VERSION: version,
    REPOSITORY: repository,
    RELEASE_BASE: releaseBase(repository, version),
  }
  const rendered = source.replace(/@@([A-Z_]+)@@/g, (whole, key: string) => {
    const value = values[key]
    if (value === undefined) throw new Error(`install.sh template: unknown placeholder ${whole}`)
    return value
  })
  return rendered
}
