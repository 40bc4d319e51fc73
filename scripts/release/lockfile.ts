// Reads bun.lock and returns the packages the compiled binary bundles: the runtime `dependencies`
// of the root workspace and everything they pull in, never devDependencies (the SBOM describes the
// binary, not the build machine). bun.lock is JSONC; Bun parses it natively.

/** One entry of bun.lock's `packages`: [id "name@version", registry, info, integrity]. */
type LockEntry = [string, string, LockInfo?, string?]
interface LockInfo {
  dependencies?: Record<string, string>
  optionalDependencies?: Record<string, string>
  peerDependencies?: Record<string, string>
  optionalPeers?: string[]
  os?: string | string[]
  cpu?: string | string[]
}
export interface BunLock {
  lockfileVersion: number
  workspaces: Record<string, { name?: string; dependencies?: Record<string, string> }>
  packages: Record<string, LockEntry>
}

export interface LockedPackage {
  /** The key in bun.lock's `packages`, e.g. `express/content-type` for a nested copy. */
  key: string
  name: string
  version: string
  /** Subresource-integrity string from the lockfile, when the registry gave one. */
  integrity?: string
  /** Keys of the packages this one resolved its dependencies to. */
  dependsOn: string[]
}

export function parseBunLock(text: string): BunLock {
  const parsed: unknown = Bun.JSONC.parse(text)
  if (typeof parsed !== "object" || parsed === null || !("packages" in parsed) || !("workspaces" in parsed))
    throw new Error("bun.lock: no `packages` or `workspaces`")
  return parsed as BunLock
}

function splitId(id: string) {
  const at = id.lastIndexOf("@")
  if (at <= 0) throw new Error(`bun.lock: cannot read package id ${id}`)
  return { name: id.slice(0, at), version: id.slice(at + 1) }
}

// Node's resolution mapped onto bun.lock keys: a dependency `d` of the package at key `a/b` is
// `a/b/d` if present, else `a/d`, else the hoisted `d`. Scoped names contain a slash themselves,
// so the parent chain is walked by package names, not by slashes.
function resolveKey(lock: BunLock, parentChain: string[], dep: string): string | undefined {
  for (let depth = parentChain.length; depth >= 0; depth--) {
    const key = [...parentChain.slice(0, depth), dep].join("/")
    if (key in lock.packages) return key
  }
  return undefined
}

// A key's parent chain as package names: `@a/b/c` → ["@a/b", "c"].
export function keyChain(key: string): string[] {
  const parts = key.split("/")
  const chain: string[] = []
  for (let i = 0; i < parts.length; i++) chain.push(parts[i]!.startsWith("@") ? `${parts[i]}/${parts[++i]}` : parts[i]!)
  return chain
}

function dependenciesOf(info: LockInfo | undefined) {
  return [
    ...Object.keys(info?.dependencies ?? {}).map((name) => ({ name, optional: false })),
    ...Object.keys(info?.optionalDependencies ?? {}).map((name) => ({ name, optional: true })),
    ...Object.keys(info?.peerDependencies ?? {}).map((name) => ({
      name,
      optional: info?.optionalPeers?.includes(name) ?? false,
    })),
  ]
}

/** Runtime dependency closure of the root workspace, sorted by key. */
export function runtimePackages(lock: BunLock): LockedPackage[] {
  const root = lock.workspaces[""]
  if (!root) throw new Error("bun.lock: no root workspace")
  const found = new Map<string, LockedPackage>()
  const queue: string[] = []
  for (const dep of Object.keys(root.dependencies ?? {})) {
    if (!(dep in lock.packages)) throw new Error(`bun.lock: root dependency ${dep} is not in the lockfile`)
    queue.push(dep)
  }
  while (queue.length > 0) {
    const key = queue.shift()!
    if (found.has(key)) continue
    const [id, , info, integrity] = lock.packages[key]!
    const { name, version } = splitId(id)
    const pkg: LockedPackage = { key, name, version, integrity: integrity || undefined, dependsOn: [] }
    found.set(key, pkg)
    for (const dep of dependenciesOf(info)) {
      const depKey = resolveKey(lock, keyChain(key), dep.name)
      if (depKey === undefined) {
        // Optional deps and peers may be absent (other platforms, unused peers); required ones may not.
        if (dep.optional) continue
        throw new Error(`bun.lock: ${key} needs ${dep.name}, which the lockfile does not resolve`)
      }
      if (!pkg.dependsOn.includes(depKey)) pkg.dependsOn.push(depKey)
      queue.push(depKey)
    }
  }
  for (const pkg of found.values()) pkg.dependsOn.sort()
  return [...found.values()].sort((a, b) => a.key.localeCompare(b.key))
}

/** Keys of the root workspace's direct runtime dependencies. */
export function directDependencies(lock: BunLock): string[] {
  return Object.keys(lock.workspaces[""]?.dependencies ?? {})
    .filter((dep) => dep in lock.packages)
    .sort()
}
