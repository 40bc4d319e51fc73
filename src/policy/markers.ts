// Where policy markers are looked for. Not "the nearest ancestor with a `.git`": a `.git` is workspace
// content, and a worker that plants `pkg/.git` (or a `.git` file) would make that search stop below the
// repository's real root and hide its `sensitive` marker from the next call. So the search does not
// look at `.git` at all: every directory from cwd up is searched, and a marker in any of them counts
// (`sensitive` stated anywhere wins, mode.ts), so nothing a delegated agent creates below a marker can
// hide it.
//
// The walk stops below HOME. HOME and the directories above it hold no project: HOME's `.claude` is
// Claude Code's user config dir (not a project's marker), and a machine-wide mode belongs in config.json
// `policy.mode`. Every directory below HOME may group projects (`~/clients/acme/.claude/sensitive`
// covers each repository under it), so each one counts. It also stops below a broad system root (`/tmp`,
// `/home`, `/srv` …): such a directory holds unrelated people's and projects' directories, and `/tmp` is
// writable by every local user, so a marker there is no project's statement.
// Pure: paths in, paths out; the caller does the lstat calls.
import { BROAD_ROOTS } from "../util/broad-roots"
import { MARKER_NAMES, type Mode } from "./mode"

const parentOf = (path: string) => path.slice(0, path.lastIndexOf("/")) || "/"
const isInside = (child: string, parent: string) =>
  child === parent || child.startsWith(parent === "/" ? "/" : `${parent}/`)

const stopsTheWalk = (dir: string, home: string) => isInside(home, dir) || BROAD_ROOTS.includes(dir)

/**
 * The directories whose markers count for a call in `cwd` (canonical), nearest first: cwd and each
 * ancestor up to the first that is HOME, one of HOME's ancestors or a broad system root, excluded.
 */
export function markerDirectories(cwd: string, home: string): string[] {
  const dirs: string[] = []
  for (let dir = cwd; !stopsTheWalk(dir, home); dir = parentOf(dir)) dirs.push(dir)
  return dirs
}

/** Every marker path to look for, nearest directory first, with the mode its presence states. */
export function markerCandidates(cwd: string, home: string): { path: string; mode: Exclude<Mode, "blueprint"> }[] {
  return markerDirectories(cwd, home).flatMap((dir) =>
    (["sensitive", "insensitive"] as const).flatMap((mode) =>
      MARKER_NAMES[mode].map((name) => ({ path: `${dir}/${name}`, mode })),
    ),
  )
}
