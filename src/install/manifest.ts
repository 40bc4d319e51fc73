// install-manifest.json: every file the installer wrote, with the sha256 it had when written, so
// replacement and uninstall remove only what still matches and never destroy a local edit.
import { createHash } from "node:crypto"
import { stat } from "node:fs/promises"
import { z } from "zod"
import { fail } from "../errors"
import { readJsonFile, writeAtomic } from "../util/fs"
import { readState, type StateRead } from "../util/state-file"

const OWNERS = ["core", "opencode", "codex", "claude"] as const
export type Owner = (typeof OWNERS)[number]

const ManagedFileSchema = z
  .object({
    path: z.string().startsWith("/").describe("Absolute path of the file."),
    sha256: z
      .string()
      .regex(/^[0-9a-f]{64}$/)
      .describe("Hash of the content as written."),
    owner: z.enum(OWNERS).describe("Which part of the installation the file belongs to."),
  })
  .strict()

export const InstallManifestSchema = z
  .object({
    version: z.literal(1),
    appVersion: z.string().describe("Version of the binary that wrote this manifest."),
    home: z
      .string()
      .startsWith("/")
      .optional()
      .describe("The HOME it was written for; under another HOME it is foreign (install/scope.ts)."),
    installedAt: z.string().describe("ISO time of the install."),
    integrations: z.array(z.enum(["codex", "claude"])).describe("Integrations registered by that install."),
    registrations: z
      .object({
        codex: z.object({ configFile: z.string() }).strict().optional(),
        claude: z.object({ configDir: z.string().optional() }).strict().optional(),
      })
      .strict()
      .default({})
      .describe("Where each MCP registration was written, to remove exactly that one."),
    files: z.array(ManagedFileSchema),
  })
  .strict()

export type ManagedFile = z.infer<typeof ManagedFileSchema>
export type InstallManifest = z.infer<typeof InstallManifestSchema>

export const sha256 = (content: string | Uint8Array) => createHash("sha256").update(content).digest("hex")

/** Hash of a file on disk, or null when it is absent (or not a regular file). */
export async function hashFile(path: string): Promise<string | null> {
  const file = Bun.file(path)
  try {
    // A FIFO or a device in a managed file's place would block or never end the read.
    if (!(await stat(path)).isFile()) return null
    const hash = new Bun.CryptoHasher("sha256")
    for await (const chunk of file.stream()) hash.update(chunk)
    return hash.digest("hex")
  } catch {
    // Unreadable or gone: no hash, which matches no manifest entry.
    return null
  }
}

/** The manifest, or undefined when there is no earlier installation. */
export async function readManifest(file: string): Promise<InstallManifest | undefined> {
  const raw = await readJsonFile(
    file,
    "Install",
    `Move ${file} aside and rerun \`opencode-mcp-orchestrator install\`; files it listed are then treated as not ` +
      `ours and left in place.`,
  )
  if (raw === undefined) return undefined
  const parsed = InstallManifestSchema.safeParse(raw)
  if (!parsed.success)
    throw fail(
      "Install",
      `${file} is not an install manifest this version understands: ${parsed.error.issues[0]?.message ?? "invalid"}.`,
      `Move ${file} aside and rerun \`opencode-mcp-orchestrator install\`.`,
    )
  return parsed.data
}

/**
 * The manifest for an install: one that cannot be read (not JSON, not this shape, not a regular file)
 * is set aside, and the install proceeds as a first one, which removes nothing and preserves every
 * existing file it did not write.
 */
export function readManifestForInstall(file: string): Promise<StateRead<InstallManifest>> {
  const fix =
    "Install continued as a first install: nothing was removed, files it would have replaced are kept and listed; " +
    "delete the moved file once you no longer need it."
  return readState(file, InstallManifestSchema, fix)
}

export const writeManifest = (file: string, manifest: InstallManifest) =>
  writeAtomic(file, `${JSON.stringify(manifest, null, 2)}\n`)
