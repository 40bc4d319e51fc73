// CycloneDX 1.6 JSON SBOM of what the binary bundles: the Bun runtime it embeds and the runtime
// dependency closure from bun.lock. Built with OWASP's @cyclonedx/cyclonedx-library (models,
// package.json → component builder, license normalisation, serializer and schema validator), so
// the document follows the spec rather than our reading of it.
import { Contrib, Enums, Models, Serialize, Spec, Validation } from "@cyclonedx/cyclonedx-library"
import { PackageURL } from "packageurl-js"
import spdxExpressionParse from "spdx-expression-parse"
import { type BunLock, type LockedPackage, directDependencies, runtimePackages } from "./lockfile"

export interface SbomInput {
  lock: BunLock
  version: string
  repository: string
  bunVersion: string
  /** Seconds since the epoch, for a reproducible `metadata.timestamp`. */
  timestamp: number
  /** A package's package.json as installed (licenses, description, links), when it is there. */
  readManifest: (pkg: LockedPackage) => Record<string, unknown> | undefined
  /** The library's own package.json, named in `metadata.tools`. */
  toolManifest: Record<string, unknown>
}

const licenses = new Contrib.License.Factories.LicenseFactory((expression: string) => {
  spdxExpressionParse(expression)
})
const builder = new Contrib.FromNodePackageJson.Builders.ComponentBuilder(
  new Contrib.FromNodePackageJson.Factories.ExternalReferenceFactory(),
  licenses,
)

function purlOf(name: string, version: string) {
  const [namespace, base] = name.startsWith("@") ? name.split("/", 2) : [undefined, name]
  return new PackageURL("npm", namespace, base!, version, undefined, undefined).toString()
}

// A UUID derived from the content, so the same inputs give a byte-identical SBOM.
function stableSerial(seed: string) {
  const hex = new Bun.CryptoHasher("sha256").update(seed).digest("hex")
  const variant = ((Number.parseInt(hex[16]!, 16) & 0x3) | 0x8).toString(16)
  const groups = [hex.slice(0, 8), hex.slice(8, 12), `5${hex.slice(13, 16)}`, `${variant}${hex.slice(17, 20)}`]
  return `urn:uuid:${groups.join("-")}-${hex.slice(20, 32)}`
}

function componentFor(pkg: LockedPackage, manifest: Record<string, unknown> | undefined) {
  // Only trust the installed package.json when it is the locked version.
  const data =
    manifest && manifest.name === pkg.name && manifest.version === pkg.version
      ? manifest
      : { name: pkg.name, version: pkg.version }
  const component = builder.makeComponent(data) ?? new Models.Component(Enums.ComponentType.Library, pkg.name)
  component.version = pkg.version
  component.purl = purlOf(pkg.name, pkg.version)
  component.bomRef.value = component.purl
  if (pkg.integrity) {
    try {
      const [algorithm, digest] = Contrib.FromNodePackageJson.Utils.parsePackageIntegrity(pkg.integrity)
      component.hashes.set(algorithm, digest)
    } catch {
      // An integrity format the library does not know is left out rather than guessed.
    }
  }
  return component
}

export function buildSbom(input: SbomInput): Models.Bom {
  const packages = runtimePackages(input.lock)
  const [owner, name] = input.repository.split("/")
  const root = new Models.Component(Enums.ComponentType.Application, "opencode-mcp-orchestrator", {
    version: input.version,
    description: "MCP server that delegates bounded coding work to OpenCode agents (single compiled binary).",
    purl: new PackageURL("github", owner, name!, `v${input.version}`, undefined, undefined).toString(),
  })
  root.bomRef.value = "opencode-mcp-orchestrator"
  root.licenses.add(licenses.makeFromString("MIT"))
  const runtime = new Models.Component(Enums.ComponentType.Platform, "bun", {
    version: input.bunVersion,
    description: "Bun runtime embedded by `bun build --compile`.",
    purl: purlOf("bun", input.bunVersion),
  })
  runtime.bomRef.value = runtime.purl!
  runtime.licenses.add(licenses.makeFromString("MIT"))

  // Nested copies of one name@version (bun.lock keys like express/content-type) become one component.
  const byKey = new Map<string, Models.Component>()
  const byPurl = new Map<string, Models.Component>()
  for (const pkg of packages) {
    const purl = purlOf(pkg.name, pkg.version)
    const component = byPurl.get(purl) ?? componentFor(pkg, input.readManifest(pkg))
    byPurl.set(purl, component)
    byKey.set(pkg.key, component)
  }
  for (const pkg of packages)
    for (const dep of pkg.dependsOn) byKey.get(pkg.key)!.dependencies.add(byKey.get(dep)!.bomRef)
  root.dependencies.add(runtime.bomRef)
  for (const dep of directDependencies(input.lock)) root.dependencies.add(byKey.get(dep)!.bomRef)

  const tool = builder.makeComponent(input.toolManifest, Enums.ComponentType.Library)
  const bom = new Models.Bom({
    serialNumber: stableSerial(`${input.repository}@${input.version}\n${JSON.stringify(packages)}`),
    metadata: new Models.Metadata({
      timestamp: new Date(input.timestamp * 1000),
      component: root,
      tools: new Models.Tools({ components: new Models.ComponentRepository(tool ? [tool] : []) }),
    }),
  })
  bom.components.add(runtime)
  for (const component of byPurl.values()) bom.components.add(component)
  return bom
}

export function serializeSbom(bom: Models.Bom): string {
  const serializer = new Serialize.JsonSerializer(new Serialize.JSON.Normalize.Factory(Spec.Spec1dot6))
  return `${serializer.serialize(bom, { sortLists: true, space: 2 })}\n`
}

/** Schema errors from the official CycloneDX 1.6 JSON schema, or null when valid. */
export async function validateSbom(json: string): Promise<unknown> {
  return new Validation.JsonStrictValidator(Spec.Version.v1dot6).validate(json)
}
