// Real repositories for the patch tests: a dirty tree holding every kind of change a snapshot must
// carry, the edits a worker makes (every kind a patch must carry), and a byte-exact listing of a tree.
import { createHash } from "node:crypto"
import { chmod, lstat, mkdir, readdir, readFile, readlink, rename, rm, symlink, writeFile } from "node:fs/promises"
import { readFlags } from "../../src/config/flags"
import { resolvePaths } from "../../src/config/paths"
import { hostContext } from "../../src/sandbox"
import { git } from "../helpers/git"

export { git } from "../helpers/git"

const LATIN1 = Buffer.from([0x63, 0x61, 0x66, 0xe9, 0x0a]) // "café\n" in Latin-1: not UTF-8
const BINARY = Buffer.from([0, 1, 2, 3, 255, 254, 0, 10, 13, 0])

/**
 * A repository at `dir` with a commit, then a staged edit, an unstaged edit, an untracked file, an
 * ignored file (not part of the snapshot) and a deletion in the working tree.
 */
export async function dirtyRepo(dir: string): Promise<string> {
  await mkdir(`${dir}/src`, { recursive: true })
  await mkdir(`${dir}/bin`)
  await mkdir(`${dir}/dir`)
  await writeFile(`${dir}/README.md`, "# demo\n")
  await writeFile(`${dir}/src/a.txt`, "one\ntwo\nthree\n")
  await writeFile(`${dir}/bin/run.sh`, "#!/bin/sh\necho run\n", { mode: 0o755 })
  await writeFile(`${dir}/img.bin`, BINARY)
  await writeFile(`${dir}/latin1.txt`, LATIN1)
  await writeFile(`${dir}/old name.txt`, "renamed content that is long enough to be detected as a rename\n".repeat(4))
  await writeFile(`${dir}/dir/keep.txt`, "keep\n")
  await writeFile(`${dir}/del.txt`, "to delete\n")
  await writeFile(`${dir}/gone.txt`, "deleted in the working tree\n")
  await writeFile(`${dir}/héllo wörld.txt`, "non-ascii name\n")
  await writeFile(`${dir}/.gitignore`, "*.log\n")
  await symlink("src/a.txt", `${dir}/link`)
  await git(dir, "init", "-q")
  await git(dir, "add", "-A")
  await git(dir, "commit", "-qm", "base")
  await writeFile(`${dir}/src/a.txt`, "one\ntwo (staged)\nthree\n")
  await git(dir, "add", "src/a.txt")
  await writeFile(`${dir}/README.md`, "# demo\n\nunstaged\n")
  await writeFile(`${dir}/new untracked.txt`, "untracked\n")
  await writeFile(`${dir}/build.log`, "ignored\n")
  await rm(`${dir}/gone.txt`)
  return dir
}

/** What a worker does, in the worktree: every kind of change a patch carries. */
export async function everyChange(tree: string) {
  await writeFile(`${tree}/src/a.txt`, "one\ntwo (staged)\nthree\nfour\n")
  await mkdir(`${tree}/added dir`)
  await writeFile(`${tree}/added dir/ünï cödé.txt`, "new file, non-ascii name\n")
  await rm(`${tree}/del.txt`)
  await rename(`${tree}/old name.txt`, `${tree}/new name.txt`)
  await chmod(`${tree}/README.md`, 0o755)
  await chmod(`${tree}/bin/run.sh`, 0o644)
  await rm(`${tree}/link`)
  await symlink("README.md", `${tree}/link`)
  await symlink("src", `${tree}/newlink`)
  await writeFile(`${tree}/img.bin`, Buffer.concat([BINARY, BINARY]))
  await writeFile(`${tree}/new.bin`, Buffer.from([0, 0, 7, 255]))
  await writeFile(`${tree}/latin1.txt`, Buffer.from([0x63, 0x61, 0x66, 0xe8, 0x0a]))
  await rm(`${tree}/dir/keep.txt`)
  await symlink("../README.md", `${tree}/dir/keep.txt`)
  await writeFile(`${tree}/untracked-by-worker.log`, "ignored: not in the patch\n")
}

/** The same edits as one shell command, for a scripted worker's sandbox_shell call. */
export const EVERY_CHANGE_SHELL = [
  "printf 'one\\ntwo (staged)\\nthree\\nfour\\n' > src/a.txt",
  "mkdir 'added dir' && printf 'new file, non-ascii name\\n' > 'added dir/ünï cödé.txt'",
  "rm del.txt",
  "mv 'old name.txt' 'new name.txt'",
  "chmod 755 README.md && chmod 644 bin/run.sh",
  "rm link && ln -s README.md link && ln -s src newlink",
  "cat img.bin img.bin > img.tmp && mv img.tmp img.bin",
  "printf '\\000\\000\\007\\377' > new.bin",
  "printf 'caf\\350\\n' > latin1.txt",
  "rm dir/keep.txt && ln -s ../README.md dir/keep.txt",
  "echo 'ignored: not in the patch' > untracked-by-worker.log",
  "echo done",
].join(" && ")

/** Every file and symlink under `dir` (not `.git`, not ignored logs when `skip` says so): path → mode and content. */
export async function listing(
  dir: string,
  skip: (path: string) => boolean = () => false,
): Promise<Record<string, string>> {
  const out: Record<string, string> = {}
  for (const path of (await readdir(dir, { recursive: true })).sort()) {
    if (path === ".git" || path.startsWith(".git/") || skip(path)) continue
    const info = await lstat(`${dir}/${path}`)
    if (info.isSymbolicLink()) out[path] = `link:${await readlink(`${dir}/${path}`)}`
    else if (info.isFile())
      out[path] = `${info.mode & 0o100 ? "x" : "-"}:${createHash("sha256")
        .update(await readFile(`${dir}/${path}`))
        .digest("hex")}`
  }
  return out
}

/** Every byte under a directory (a `.git`), to prove nothing was written there. */
export async function fingerprintTree(dir: string): Promise<string> {
  const hash = createHash("sha256")
  for (const path of (await readdir(dir, { recursive: true })).sort()) {
    const info = await lstat(`${dir}/${path}`)
    hash.update(`${path}:${info.mode}:${info.size}:${info.mtimeMs}\n`)
    if (info.isFile()) hash.update(await readFile(`${dir}/${path}`))
  }
  return hash.digest("hex")
}

/** A HOME under `dir` and a dirty repository beside it, with the host context and paths of that HOME. */
export async function patchWorld(dir: string) {
  const env = { HOME: `${dir}/home`, PATH: "/usr/bin:/bin" }
  await mkdir(`${dir}/home`)
  const repo = await dirtyRepo(`${dir}/repo`)
  return { repo, host: hostContext(readFlags(env)), paths: resolvePaths(readFlags(env)) }
}
