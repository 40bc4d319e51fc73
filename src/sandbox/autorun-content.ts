// The part of a package manifest that runs on its own: npm's install-time lifecycle scripts and what
// else an install or a commit runs from package.json (the package manager corepack fetches, hook
// managers' config, dependencies from outside the registry, whose own scripts run on install), and
// Composer's event scripts and plugins. Everything else in the file is ordinary to edit. Pure.

export type ContentRule = "npm" | "composer"

/** npm runs these on `npm install` / `npm ci` in the project (pnpm, yarn and bun run the same names). */
const NPM_SCRIPTS = [
  "preinstall",
  "install",
  "postinstall",
  "preprepare",
  "prepare",
  "postprepare",
  "prepublish",
  "prepack",
  "postpack",
  "dependencies",
]
/** Top-level fields whose content runs: corepack's download, Git hook managers reading package.json. */
const NPM_FIELDS = ["packageManager", "simple-git-hooks", "husky", "gitHooks", "pre-commit", "lint-staged", "ghooks"]
const DEPENDENCY_FIELDS = [
  "dependencies",
  "devDependencies",
  "optionalDependencies",
  "peerDependencies",
  "overrides",
  "resolutions",
]
/** Composer runs these on install, update and create-project. */
const COMPOSER_SCRIPTS = [
  "pre-install-cmd",
  "post-install-cmd",
  "pre-update-cmd",
  "post-update-cmd",
  "pre-autoload-dump",
  "post-autoload-dump",
  "post-root-package-install",
  "post-create-project-cmd",
  "pre-package-install",
  "post-package-install",
  "pre-package-update",
  "post-package-update",
]

type Json = null | boolean | number | string | Json[] | { [key: string]: Json }
const isObject = (value: Json | undefined): value is { [key: string]: Json } =>
  typeof value === "object" && value !== null && !Array.isArray(value)

const pick = (source: Json | undefined, keys: string[]) => {
  const out: Record<string, Json> = {}
  if (isObject(source)) for (const key of keys) if (source[key] !== undefined) out[key] = source[key]
  return out
}

/** A dependency spec the registry does not serve (git, URL, path, tarball): its scripts are not the registry's. */
const outsideRegistry = (spec: Json) =>
  typeof spec !== "string" || (/[:/]/.test(spec) && !/^(npm|workspace|catalog|jsr):/.test(spec))

function npmPart(manifest: { [key: string]: Json }): Record<string, Json> {
  const part: Record<string, Json> = { ...pick(manifest, NPM_FIELDS) }
  const scripts = pick(manifest.scripts, NPM_SCRIPTS)
  if (Object.keys(scripts).length) part.scripts = scripts
  if (isObject(manifest.config) && manifest.config.ghooks !== undefined) part["config.ghooks"] = manifest.config.ghooks
  for (const field of DEPENDENCY_FIELDS) {
    const deps = manifest[field]
    if (!isObject(deps)) continue
    const outside = Object.fromEntries(Object.entries(deps).filter(([, spec]) => outsideRegistry(spec)))
    if (Object.keys(outside).length) part[field] = outside
  }
  return part
}

function composerPart(manifest: { [key: string]: Json }): Record<string, Json> {
  const part: Record<string, Json> = {}
  const scripts = pick(manifest.scripts, COMPOSER_SCRIPTS)
  if (Object.keys(scripts).length) part.scripts = scripts
  if (isObject(manifest.config) && manifest.config["allow-plugins"] !== undefined)
    part["allow-plugins"] = manifest.config["allow-plugins"]
  return part
}

/** Keys sorted at every level, so the same content in another order is the same fingerprint. */
const canonical = (value: Json): string =>
  isObject(value)
    ? `{${Object.keys(value)
        .sort()
        .map((key) => `${JSON.stringify(key)}:${canonical(value[key]!)}`)
        .join(",")}}`
    : Array.isArray(value)
      ? `[${value.map(canonical).join(",")}]`
      : JSON.stringify(value)

/**
 * What of a manifest's text runs on its own, as a comparable string; undefined when the file is
 * absent or nothing in it runs. Text that does not parse counts as its own content (fail closed: a
 * package manager more lenient than JSON.parse could still run it).
 */
export function contentFingerprint(rule: ContentRule, text: string | undefined): string | undefined {
  if (text === undefined) return undefined
  let manifest: Json
  try {
    // npm and Composer strip a byte-order mark before parsing; so does this.
    manifest = JSON.parse(text.replace(/^\uFEFF/, "")) as Json
  } catch {
    // Not JSON to us: the text itself is what is compared.
    return `unparsed:${Bun.hash(text).toString(16)}`
  }
  if (!isObject(manifest)) return `unparsed:${Bun.hash(text).toString(16)}`
  const part = rule === "npm" ? npmPart(manifest) : composerPart(manifest)
  return Object.keys(part).length ? `${rule}:${canonical(part)}` : undefined
}
