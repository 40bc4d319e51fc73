// What of a patch runs or instructs on its own (src/sandbox/autorun.json): files named so, and
// manifests whose install-time part the patch changes. patch_apply refuses both unless the caller
// passes allow_autorun after reading them; files only the rules catch are named when written. Read from
// the private repository's blobs, never the workspace.
import { dirname, join, normalize } from "node:path"
import {
  autorunBelow,
  autorunHitIn,
  autorunWrite,
  describeHit,
  ruleByPath,
  type AutorunHit,
  type AutorunRule,
} from "../../sandbox"
import type { AutorunLink } from "../snapshot"
import type { PatchFile } from "../patches"
import { shownName } from "../names"

/**
 * Every path a patch writes, deletes or renames away that is an autorun file by name (`prefix`: the
 * workspace in its repository, or in each repository around it). Pure.
 */
export function namedAutorun(
  files: PatchFile[],
  prefix: string | readonly string[],
  links: AutorunLink[] = [],
  isDirectory: (path: string) => boolean = () => false,
): AutorunHit[] {
  // A link the patch writes to a directory where an entry continues through it (`.vscode -> editor`)
  // makes that directory's files the entry's; a link to a file (`.eslintrc.json -> ../x`) has nothing below.
  const made = files.flatMap((file) => {
    const below =
      file.newMode === "120000" && file.linkTarget !== undefined ? autorunBelow(prefix, file.path) : undefined
    if (!below) return []
    const target = normalize(join(dirname(file.path), file.linkTarget!))
    const directory = isDirectory(target) || files.some((other) => other.newOid && other.path.startsWith(`${target}/`))
    return directory ? [{ ...below, detail: `${below.detail}, through the link the patch writes` }] : []
  })
  const paths = files.flatMap((file) => [file.path, ...(file.oldPath ? [file.oldPath] : [])])
  return made.concat(
    paths.flatMap((path) => {
      const hit = autorunHitIn(prefix, path)
      if (hit && !hit.content) return [{ ...hit, path }]
      // Reached through a link in an entry (`.github/workflows -> ../ci`), or above one (`.vscode -> editor`): it runs
      // as that entry.
      const via = links.find(({ target }) => path === target || path.startsWith(`${target}/`))
      const linked = via && autorunHitIn(prefix, via.entry ? via.link : `${via.link}${path.slice(via.target.length)}`)
      return linked ? [{ ...linked, path, detail: `${linked.detail}, reached through ${via.link}` }] : []
    }),
  )
}

/**
 * Every file of a patch the rules catch (autorun-rules.ts), by the same rules a worker's result names
 * them: a mode change, a new executable, a hidden path, a root-level file that is not source. Paths
 * the named list covers are left to it. Pure.
 */
export function ruleAutorun(
  files: PatchFile[],
  prefix: string | readonly string[],
): { path: string; rule: AutorunRule }[] {
  return files.flatMap((file) => {
    if (autorunHitIn(prefix, file.path) || (file.oldPath && autorunHitIn(prefix, file.oldPath))) return []
    const rule =
      file.oldMode && file.newMode && file.oldMode !== file.newMode
        ? "mode-change"
        : file.newMode === "100755" && !file.oldMode
          ? "executable"
          : (ruleByPath(file.path, prefix) ?? (file.oldPath ? ruleByPath(file.oldPath, prefix) : undefined))
    return rule ? [{ path: file.path, rule }] : []
  })
}

/** A blob's text as its content rule sees it (a symlink is `link:<target>`), by object id and mode. */
export type BlobText = (oid: string, mode: string | undefined) => Promise<string>

/**
 * Manifests (package.json, composer.json) whose install-time part differs between the blobs the patch
 * replaces and the blobs it writes. A rename counts as a deletion of the old path and a creation of
 * the new one. Only paths a content rule covers are read.
 */
export async function contentAutorun(
  files: PatchFile[],
  blob: BlobText,
  prefix: string | readonly string[],
): Promise<AutorunHit[]> {
  const hits: AutorunHit[] = []
  for (const file of files) {
    const source = file.oldPath ?? file.path
    const renamed = source !== file.path
    if (!autorunHitIn(prefix, source)?.content && !autorunHitIn(prefix, file.path)?.content) continue
    const old = file.oldOid ? await blob(file.oldOid, file.oldMode) : undefined
    const now = file.newOid ? await blob(file.newOid, file.newMode) : undefined
    const gone = autorunWrite(source, old, renamed ? undefined : now, prefix)
    if (gone?.content) hits.push({ ...gone, path: source })
    const made = renamed ? autorunWrite(file.path, undefined, now, prefix) : undefined
    if (made?.content) hits.push({ ...made, path: file.path })
  }
  return hits
}

/** The refusal's text: the first few paths, then what each is and why it matters. Pure. */
export function autorunMessage(hits: AutorunHit[]): string {
  const shown = hits.slice(0, 5)
  const more = hits.length > 5 ? ` and ${hits.length - 5} more` : ""
  const what = shown.map((hit) => `${describeHit(hit)}${hit.content ? " The patch changes what runs on install." : ""}`)
  return (
    `the patch changes files that other programs run on their own: ` +
    `${shown.map((hit) => shownName(hit.path)).join(", ")}${more}. ${what.join(" ")}`
  )
}
