// What a snapshot refuses, before anything is copied or registered: no repository, a submodule, a
// nested repository, too many files or bytes. And a subdirectory as cwd: the snapshot, the patch
// and its paths are relative to it.
import { expect, test } from "bun:test"
import { existsSync } from "node:fs"
import { mkdir, readdir, writeFile } from "node:fs/promises"
import { readFlags } from "../../src/config/flags"
import { resolvePaths } from "../../src/config/paths"
import { hostContext } from "../../src/sandbox"
import { applyPatch, unsafePath } from "../../src/workspace/apply/apply"
import { collectPatch } from "../../src/workspace/patches/patch"
import { createWorktree, snapshotPaths } from "../../src/workspace/worktree/worktree"
import { tempDir } from "../helpers/temp"
import { git, listing } from "./_repo"

async function world(dir: string) {
  const env = { HOME: `${dir}/home`, PATH: "/usr/bin:/bin" }
  await mkdir(`${dir}/home`)
  await mkdir(`${dir}/repo/pkg`, { recursive: true })
  await writeFile(`${dir}/repo/pkg/a.txt`, "a\n")
  await writeFile(`${dir}/repo/top.txt`, "top\n")
  await git(`${dir}/repo`, "init", "-q")
  await git(`${dir}/repo`, "add", "-A")
  await git(`${dir}/repo`, "commit", "-qm", "one")
  return { repo: `${dir}/repo`, host: hostContext(readFlags(env)), paths: resolvePaths(readFlags(env)) }
}

test.each([
  ["a submodule", "160000 0123456789012345678901234567890123456789 0\tvendor/lib\x00", "", /submodule at vendor\/lib/],
  ["a nested repository", "", "nested/\x00", /nested Git repository at nested\//],
  ["a name that is not UTF-8", "", "caf\uFFFD.txt\x00", /not valid UTF-8/],
])("snapshotPaths refuses %s", (_, staged, untracked, refusal) => {
  expect(() => snapshotPaths(staged, untracked)).toThrow(refusal)
})

test("snapshotPaths keeps tracked and untracked paths once each, whatever their names", () => {
  expect(snapshotPaths("100644 aa 1\tx y.txt\x00100644 bb 2\tx y.txt\x00100755 cc 0\t-n\x00", "ünï.txt\x00")).toEqual([
    "-n",
    "x y.txt",
    "ünï.txt",
  ])
})

// Every row has its limits (or undefined): a callback with more parameters than the row is taken for a done-callback test.
const refusals: Array<
  [string, (repo: string, dir: string) => Promise<string>, RegExp, { files: number; bytes: number } | undefined]
> = [
  [
    "a directory outside any repository",
    async (_, dir) => {
      await mkdir(`${dir}/plain`)
      return `${dir}/plain`
    },
    /not inside a Git repository/,
    undefined,
  ],
  [
    "a repository with a submodule",
    async (repo, dir) => {
      await mkdir(`${dir}/sub`)
      await git(`${dir}/sub`, "init", "-q")
      await git(`${dir}/sub`, "commit", "-q", "--allow-empty", "-m", "s")
      await git(repo, "-c", "protocol.file.allow=always", "submodule", "add", "-q", `${dir}/sub`, "vendor/sub")
      return repo
    },
    /submodule at vendor\/sub/,
    undefined,
  ],
  [
    "an untracked nested repository",
    async (repo) => {
      await mkdir(`${repo}/nested`)
      await git(`${repo}/nested`, "init", "-q")
      await writeFile(`${repo}/nested/x`, "x\n")
      return repo
    },
    /nested Git repository at nested\//,
    undefined,
  ],
  ["too many files", async (repo) => repo, /would hold 2 files, more than the 1/, { files: 1, bytes: 1 << 20 }],
  ["too many bytes", async (repo) => repo, /would copy 6 bytes, more than the 5/, { files: 100, bytes: 5 }],
]

test.each(refusals)(
  "the snapshot of %s is refused before anything is copied or registered",
  async (_, arrange, refusal, limits) => {
    await using dir = await tempDir("oc-orch-snap-")
    const { repo, host, paths } = await world(dir.path)
    const cwd = await arrange(repo, dir.path)
    await expect(createWorktree(cwd, { host, paths, limits })).rejects.toThrow(refusal)
    expect(existsSync(paths.worktreesDir) ? await readdir(paths.worktreesDir) : []).toEqual([])
    expect(existsSync(paths.patchesDir) ? await readdir(paths.patchesDir) : []).toEqual([])
  },
)

test("a subdirectory as cwd: the snapshot is that directory, and the patch applies there", async () => {
  await using dir = await tempDir("oc-orch-snap-")
  const { repo, host, paths } = await world(dir.path)
  const { record, layout } = await createWorktree(`${repo}/pkg`, { host, paths })
  expect(await listing(layout.tree)).toEqual(await listing(`${repo}/pkg`))
  await writeFile(`${layout.tree}/a.txt`, "a\nb\n")
  const patch = await collectPatch(record, paths.patchesDir, host)
  expect(patch.files?.map((file) => file.path)).toEqual(["a.txt"])
  const patchFile = `${paths.patchesDir}/${record.id}.patch`
  await applyPatch({ record: patch, patchFile, digest: patch.digest!, workspace: `${repo}/pkg`, host })
  expect(await Bun.file(`${repo}/pkg/a.txt`).text()).toBe("a\nb\n")
  expect(await Bun.file(`${repo}/top.txt`).text()).toBe("top\n")
  // The same patch names the repository root as another workspace.
  await expect(applyPatch({ record: patch, patchFile, digest: patch.digest!, workspace: repo, host })).rejects.toThrow(
    /not the workspace/,
  )
})

test.each([
  ["/etc/passwd", "it is not a relative path"],
  ["a/../../x", "it is not a plain relative path"],
  ["sub/.GIT/config", "it is Git metadata"],
  ["caf\uFFFD.txt", "its name is not valid UTF-8"],
  ["src/ok name.txt", undefined],
])("a patch path %p: %p", (path, why) => {
  expect(unsafePath(path)).toBe(why)
})
