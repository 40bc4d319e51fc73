// The directory OpenCode is given for a workspace. OpenCode (1.18) imports the plugin files of every
// `.opencode/` and every `opencode.json(c)` `plugin` entry between an instance's directory and its project
// root, even with OPENCODE_DISABLE_PROJECT_CONFIG=1, whenever it loads that instance: a first request
// there, a request after the instance was disposed, a restarted server, a TUI attached with `--dir`. A
// check before the load races with an agent writing in the same repository. So OpenCode is never given
// a directory an agent could write: each workspace is named to it by a stand-in, an empty directory of
// ours under the state dir (outside every repository, inside no sandbox), and OpenCode's walk from there
// meets only our own directories and HOME's ancestors, which admission keeps every agent out of. The
// plugin maps a stand-in back to its workspace through a map file named by the workspace's hash: a
// changed or garbage map does not hash back and is refused.
import { createHash } from "node:crypto"
import { mkdirSync, mkdtempSync, renameSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { deflateSync } from "node:zlib"
import { fail } from "../errors"
import { hostFs, type FsView } from "./fs-view"

/** A stand-in's name: the first 32 hex digits of the SHA-256 of the workspace path. */
const NAME = /^[0-9a-f]{32}$/

const nameOf = (workspace: string) => createHash("sha256").update(workspace).digest("hex").slice(0, 32)

/** The stand-in for `workspace` under `root` (paths.opencodeDirsDir); pure. */
export const standInOf = (root: string, workspace: string) => `${root}/${nameOf(workspace)}`

/** The map file beside a stand-in: the workspace path, and nothing else. */
const mapOf = (standIn: string) => `${standIn}.workspace`

/** A Git object stored loose: `<kind> <size>\0<body>`, deflated, under its SHA-1; its name. */
function writeObject(gitDir: string, kind: string, body: string): string {
  const data = Buffer.concat([Buffer.from(`${kind} ${Buffer.byteLength(body)}\0`), Buffer.from(body)])
  const name = createHash("sha1").update(data).digest("hex")
  mkdirSync(`${gitDir}/objects/${name.slice(0, 2)}`, { recursive: true, mode: 0o700 })
  writeFileSync(`${gitDir}/objects/${name.slice(0, 2)}/${name.slice(2)}`, deflateSync(data), { mode: 0o600 })
  return name
}

/**
 * A Git repository of the stand-in's own with one empty commit (its message the stand-in's name, so each
 * is a project of its own): OpenCode takes the stand-in as the project root, so its walk for config stops
 * there, and never takes `/` as the project, as it does for a directory in no repository with a commit
 * (its prompt would then list the whole filesystem). Written by hand: no program runs here.
 */
function writeRepository(standIn: string): void {
  const gitDir = `${standIn}/.git`
  mkdirSync(`${gitDir}/refs/heads`, { recursive: true, mode: 0o700 })
  const tree = writeObject(gitDir, "tree", "")
  const who = "opencode-mcp-orchestrator <stand-in@localhost> 0 +0000"
  const name = standIn.slice(standIn.lastIndexOf("/") + 1)
  const commit = writeObject(gitDir, "commit", `tree ${tree}\nauthor ${who}\ncommitter ${who}\n\nstand-in ${name}\n`)
  writeFileSync(`${gitDir}/refs/heads/main`, `${commit}\n`, { mode: 0o600 })
  writeFileSync(`${gitDir}/HEAD`, "ref: refs/heads/main\n", { mode: 0o600 })
}

/** True when `directory` is a stand-in under `root` (whether or not it exists). */
export function isStandIn(root: string, directory: string): boolean {
  const slash = directory.lastIndexOf("/")
  return directory.slice(0, slash) === root && NAME.test(directory.slice(slash + 1))
}

/**
 * The stand-in for `directory`, created with its map if missing (synchronously: it is called from a
 * fetch about to leave). A stand-in passes through unchanged. The map is written whole and renamed into
 * place, so a process killed mid-write leaves the old map or none, never half of one.
 */
export function provideStandIn(root: string, directory: string): string {
  if (isStandIn(root, directory)) return directory
  const standIn = standInOf(root, directory)
  const map = mapOf(standIn)
  // Already whole (the usual case, at every request): nothing is written.
  if (hostFs.readText(map) === directory && hostFs.lstat(`${standIn}/.git/HEAD`) === "file") return standIn
  writeRepository(standIn)
  const temporary = `${map}.${process.pid}.${Date.now()}`
  writeFileSync(temporary, directory, { mode: 0o600 })
  renameSync(temporary, map)
  return standIn
}

/**
 * The stand-in for no workspace: where OpenCode processes of ours run, and what a request naming no
 * directory names (OpenCode would otherwise load an instance in its working directory). It maps to the
 * stand-ins' root, which admission refuses as a workspace.
 */
export const neutralStandIn = (root: string) => provideStandIn(root, root)

/**
 * `use` given a stand-ins root of its own under the temporary directory, removed after whatever `use` did:
 * for OpenCode runs before anything is confirmed (install reads the models first), so a cancelled run
 * leaves nothing under HOME. The stand-in is still a repository of its own, so OpenCode's walk for config
 * stops inside it wherever the temporary directory is.
 */
export async function withScratchStandIns<T>(use: (root: string) => Promise<T>): Promise<T> {
  const root = mkdtempSync(`${tmpdir()}/oc-orch-stand-ins-`)
  try {
    return await use(root)
  } finally {
    rmSync(root, { recursive: true, force: true })
  }
}

/**
 * The workspace a session's directory stands for: the directory itself when it is no stand-in (a session
 * someone started there directly, which admission then judges), else the workspace its map names. A map
 * that is missing, unreadable, not absolute or that does not hash back to the stand-in's name refuses.
 */
export function workspaceOf(root: string, directory: string, fs: FsView): string {
  if (!isStandIn(root, directory)) return directory
  const workspace = fs.readText(mapOf(directory))
  if (workspace?.startsWith("/") && standInOf(root, workspace) === directory) return workspace
  throw fail(
    "Sandbox",
    `The session's directory ${directory} stands for no workspace (its map ${mapOf(directory)} is missing, ` +
      "unreadable or names another directory); nothing was run.",
    "Start the delegation again: the map is written before OpenCode is asked about a workspace.",
    { directory },
  )
}

/** A session's directory as a person reads it: its workspace, or the directory itself when no map says. */
export function shownDirectory(root: string, directory: string, fs: FsView): string {
  try {
    return workspaceOf(root, directory, fs)
  } catch {
    // A stand-in whose map is gone still lists; it is shown as what OpenCode knows it by.
    return directory
  }
}
