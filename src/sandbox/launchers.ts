// Launchers the sandbox starts by absolute path, checked by install (which refuses without them) and by
// doctor. A PATH substitute does not count: inside the sandbox /usr is bound read-only, so /bin/bash
// there is the host's /usr/bin/bash. bubblewrap must be at least 0.12.0: older releases let a
// symlinked mount destination create files on the host (GHSA-pxhw-h44j-8pfx).
import { access, constants, stat } from "node:fs/promises"
import { BWRAP_FIX } from "./bwrap"
import { probeBwrap } from "./probes"

export interface Launchers {
  bash: string
  python3: string
  git: string
  bwrap: string
}

export const LAUNCHERS: Launchers = {
  bash: "/usr/bin/bash",
  python3: "/usr/bin/python3",
  git: "/usr/bin/git",
  bwrap: "/usr/bin/bwrap",
}

export interface Finding {
  ok: boolean
  detail: string
  fix?: string
}

/** Exists, is not a directory (symlinks followed), and is executable. */
export async function launcherFinding(name: string, path: string): Promise<Finding> {
  try {
    const info = await stat(path)
    if (info.isDirectory())
      return { ok: false, detail: `${path} is a directory`, fix: `Install ${name} so that ${path} is the executable.` }
    await access(path, constants.X_OK)
    return { ok: true, detail: path }
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code
    const why = code === "EACCES" ? "is not executable" : "is missing"
    return {
      ok: false,
      detail: `${path} ${why}`,
      fix:
        `Install ${name} at exactly ${path} (e.g. \`apt-get install ` +
        `${name === "python3" ? "python3" : name}\`); a copy elsewhere on PATH does not count.`,
    }
  }
}

export async function bwrapFinding(path: string): Promise<Finding> {
  const fix = BWRAP_FIX
  const present = await launcherFinding("bubblewrap", path)
  if (!present.ok) return { ...present, fix }
  const report = await probeBwrap(path)
  return report.safe ? { ok: true, detail: `${path} (${report.detail})` } : { ok: false, detail: report.detail, fix }
}

export async function prerequisiteFindings(launchers: Launchers): Promise<Array<Finding & { name: string }>> {
  const found = await Promise.all([
    launcherFinding("bash", launchers.bash).then((f) => ({ ...f, name: "bash" })),
    launcherFinding("python3", launchers.python3).then((f) => ({ ...f, name: "python3" })),
    launcherFinding("git", launchers.git).then((f) => ({ ...f, name: "git" })),
    bwrapFinding(launchers.bwrap).then((f) => ({ ...f, name: "bwrap" })),
  ])
  return found
}
