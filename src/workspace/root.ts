// The workspace a delegation runs in: an existing directory, canonicalized (symlinks resolved) so
// locks and records name one directory one way, and admitted by the sandbox's one admission rule
// (src/sandbox/admission.ts) before anything is recorded, locked or started.
import { statIfPresent } from "../util/fs"
import { isAbsolute } from "node:path"
import { type AdmissionPolicy, type HostContext, admitWorkspace, hostFs } from "../sandbox"
import { fail } from "../errors"

/**
 * `cwd` as a caller named it, admitted. The engine's isolated worktrees are refused here whatever the
 * registry says (`engine` is for the engine's own sessions in them): a caller passes its repository.
 */
export async function canonicalWorkspace(
  cwd: string,
  host: HostContext,
  policy: AdmissionPolicy,
  engine = false,
): Promise<string> {
  if (!isAbsolute(cwd))
    throw fail("Usage", `cwd must be an absolute path, got "${cwd}".`, "Pass the repository's absolute path as cwd.")
  const info = await statIfPresent(cwd).catch((error: NodeJS.ErrnoException) => {
    throw fail(
      "Usage",
      `The workspace ${cwd} cannot be inspected: ${error.code ?? error.message}.`,
      "Pass a directory this user can read as cwd.",
    )
  })
  if (!info) throw fail("Usage", `The workspace ${cwd} does not exist.`, "Pass an existing directory as cwd.")
  if (!info.isDirectory())
    throw fail(
      "Usage",
      `The workspace ${cwd} is not a directory.`,
      "Pass the repository's directory, not a file, as cwd.",
    )
  return admitWorkspace(cwd, engine ? host : { ...host, worktrees: undefined }, policy, hostFs)
}
