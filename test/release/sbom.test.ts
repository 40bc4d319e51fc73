// Resolving the runtime dependency closure from bun.lock, and the CycloneDX document built from it.
import { describe, expect, test } from "bun:test"
import {
  type BunLock,
  directDependencies,
  keyChain,
  parseBunLock,
  runtimePackages,
} from "../../scripts/release/lockfile"
import { buildSbom, serializeSbom, validateSbom } from "../../scripts/release/sbom"

const integrity = `sha512-${Buffer.alloc(64, 7).toString("base64")}`

// A lockfile in bun's text format (JSONC with trailing commas): nested copies, a scoped package,
// an optional peer that is absent, and dev dependencies that must not appear.
const lockText = `{
  "lockfileVersion": 1,
  "workspaces": {
    "": {
      "name": "app",
      "dependencies": { "express": "5", "@scope/lib": "1" },
      "devDependencies": { "typescript": "7" },
    },
  },
  "packages": {
    "express": ["express@5.0.0", "", { "dependencies": { "content-type": "^2", "debug": "^4" } }, "${integrity}"],
    "express/content-type": ["content-type@2.1.0", "", {}, "${integrity}"],
    "content-type": ["content-type@1.0.5", "", {}, "${integrity}"],
    "debug": ["debug@4.4.3", "", { "dependencies": { "ms": "^2" }, "peerDependencies": { "supports-color": "*" }, "optionalPeers": ["supports-color"] }, ""],
    "ms": ["ms@2.1.3", "", {}, "${integrity}"],
    "@scope/lib": ["@scope/lib@1.0.0", "", { "dependencies": { "content-type": "^1", "ms": "^2" } }, "${integrity}"],
    "@scope/lib/ms": ["ms@3.0.0", "", {}, "${integrity}"],
    "typescript": ["typescript@7.0.2", "", {}, "${integrity}"],
  },
}`

describe("runtimePackages", () => {
  const lock = parseBunLock(lockText)

  test("follows node resolution over bun.lock's nested keys and leaves dev dependencies out", () => {
    const resolved = runtimePackages(lock)
    expect(resolved.map((p) => `${p.key}=${p.version}`)).toEqual([
      "@scope/lib=1.0.0",
      "@scope/lib/ms=3.0.0",
      "content-type=1.0.5",
      "debug=4.4.3",
      "express=5.0.0",
      "express/content-type=2.1.0",
      "ms=2.1.3",
    ])
    expect(resolved.find((p) => p.key === "express")!.dependsOn).toEqual(["debug", "express/content-type"])
    expect(resolved.find((p) => p.key === "@scope/lib")!.dependsOn).toEqual(["@scope/lib/ms", "content-type"])
    expect(resolved.find((p) => p.key === "debug")!.integrity).toBeUndefined()
    expect(directDependencies(lock)).toEqual(["@scope/lib", "express"])
  })

  test("a required dependency missing from the lockfile is an error, not a silent gap", () => {
    const broken: BunLock = structuredClone(lock)
    delete broken.packages.ms
    expect(() => runtimePackages(broken)).toThrow(/debug needs ms/)
  })

  test("keyChain keeps scoped names whole", () => {
    expect(keyChain("@a/b/c")).toEqual(["@a/b", "c"])
    expect(keyChain("x/@a/b")).toEqual(["x", "@a/b"])
  })

  test("the project's own bun.lock resolves, with the MCP SDK in and the SBOM library out", async () => {
    const own = runtimePackages(parseBunLock(await Bun.file(`${import.meta.dir}/../../bun.lock`).text()))
    const names = own.map((p) => p.name)
    expect(names).toContain("@modelcontextprotocol/server")
    expect(names).toContain("zod")
    expect(names).not.toContain("@cyclonedx/cyclonedx-library")
    expect(names).not.toContain("opencode-ai")
  })
})

describe("buildSbom", () => {
  const input = {
    lock: parseBunLock(lockText),
    version: "1.2.3",
    repository: "acme/orch",
    bunVersion: "1.4.5",
    timestamp: 1_700_000_000,
    readManifest: (p: { name: string; version: string }) =>
      p.name === "ms" && p.version === "2.1.3" ? { name: "ms", version: "2.1.3", license: "MIT" } : undefined,
    toolManifest: { name: "@cyclonedx/cyclonedx-library", version: "10.3.0" },
  }
  const json = serializeSbom(buildSbom(input))
  const sbom = JSON.parse(json) as {
    serialNumber: string
    metadata: { timestamp: string; component: { name: string; version: string; purl: string } }
    components: {
      name: string
      group?: string
      version: string
      purl: string
      hashes?: unknown[]
      licenses?: unknown[]
    }[]
    dependencies: { ref: string; dependsOn?: string[] }[]
  }

  test("validates against the CycloneDX 1.6 schema", async () => {
    expect(await validateSbom(json)).toBeNull()
  })

  test("describes the release, the embedded runtime and each name@version once", () => {
    expect(sbom.metadata.component).toMatchObject({
      name: "opencode-mcp-orchestrator",
      version: "1.2.3",
      purl: "pkg:github/acme/orch@v1.2.3",
    })
    expect(sbom.metadata.timestamp).toBe("2023-11-14T22:13:20.000Z")
    expect(sbom.components.map((c) => c.purl).sort()).toEqual([
      "pkg:npm/%40scope/lib@1.0.0",
      "pkg:npm/bun@1.4.5",
      "pkg:npm/content-type@1.0.5",
      "pkg:npm/content-type@2.1.0",
      "pkg:npm/debug@4.4.3",
      "pkg:npm/express@5.0.0",
      "pkg:npm/ms@2.1.3",
      "pkg:npm/ms@3.0.0",
    ])
    const ms = sbom.components.find((c) => c.purl === "pkg:npm/ms@2.1.3")!
    expect(ms.licenses).toEqual([{ license: { id: "MIT" } }])
    expect(ms.hashes).toEqual([{ alg: "SHA-512", content: Buffer.alloc(64, 7).toString("hex") }])
  })

  test("records the dependency graph from the root down", () => {
    const root = sbom.dependencies.find((d) => d.ref === "opencode-mcp-orchestrator")!
    expect(root.dependsOn?.sort()).toEqual(["pkg:npm/%40scope/lib@1.0.0", "pkg:npm/bun@1.4.5", "pkg:npm/express@5.0.0"])
    expect(sbom.dependencies.find((d) => d.ref === "pkg:npm/express@5.0.0")!.dependsOn?.sort()).toEqual([
      "pkg:npm/content-type@2.1.0",
      "pkg:npm/debug@4.4.3",
    ])
  })

  test("the same inputs give byte-identical output (serial number included)", () => {
    expect(serializeSbom(buildSbom(input))).toBe(json)
    expect(sbom.serialNumber).toMatch(/^urn:uuid:[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/)
  })
})
