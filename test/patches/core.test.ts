// Snapshot → edits → patch → apply on real git repositories and the real sandbox, without a model:
// the core the worker tool drives. What the snapshot holds, what the patch carries, that apply puts
// the user's tree exactly where the worktree is, and that nothing is written into the user's `.git`.
import { expect, test } from "bun:test"
import { existsSync } from "node:fs"
import { cp, mkdir, rm, symlink, writeFile } from "node:fs/promises"
import { dirname } from "node:path"
import { applyPatch } from "../../src/workspace/apply/apply"
import { collectPatch, patchDigest } from "../../src/workspace/patches/patch"
import { listPatches, type PatchRecord } from "../../src/workspace/patches/patches"
import { claimedLanes } from "../../src/workspace/worktree/lanes"
import { createWorktree, removeWorktree } from "../../src/workspace/worktree/worktree"
import { tempDir } from "../helpers/temp"
import { everyChange, fingerprintTree, git, listing, patchWorld } from "./_repo"

const notLogs = (path: string) => path.endsWith(".log")

test("a dirty tree is snapshotted exactly, every kind of change round-trips through the patch, and the user's .git is never written", async () => {
  await using dir = await tempDir("oc-orch-patch-")
  const { repo, host, paths } = await patchWorld(dir.path)
  const metadata = await fingerprintTree(`${repo}/.git`)
  const { record, layout } = await createWorktree(repo, { host, paths })
  expect(layout.dir.startsWith(`${paths.worktreesDir}/`)).toBe(true)
  // HEAD + staged + unstaged + untracked, without the ignored file or the one deleted in the working tree.
  const snapshot = await listing(layout.tree)
  expect(snapshot).toEqual(await listing(repo, notLogs))
  expect(Object.keys(snapshot)).toContain("new untracked.txt")
  expect(Object.keys(snapshot)).not.toContain("gone.txt")

  await everyChange(layout.tree)
  const patch = await collectPatch(record, paths.patchesDir, host)
  const byPath = Object.fromEntries(patch.files!.map((file) => [file.path, file]))
  expect(byPath["src/a.txt"]).toMatchObject({ change: "modified", additions: 1, deletions: 0, binary: false })
  expect(byPath["added dir/ünï cödé.txt"]).toMatchObject({ change: "added" })
  expect(byPath["del.txt"]).toMatchObject({ change: "deleted" })
  expect(byPath["new name.txt"]).toMatchObject({ change: "renamed", oldPath: "old name.txt" })
  expect(byPath["README.md"]).toMatchObject({ oldMode: "100644", newMode: "100755" })
  expect(byPath["bin/run.sh"]).toMatchObject({ oldMode: "100755", newMode: "100644" })
  expect(byPath.link).toMatchObject({ oldMode: "120000", newMode: "120000" })
  expect(byPath.newlink).toMatchObject({ change: "added", newMode: "120000" })
  expect(byPath["img.bin"]).toMatchObject({ binary: true })
  expect(byPath["new.bin"]).toMatchObject({ change: "added", binary: true })
  expect(byPath["dir/keep.txt"]).toMatchObject({ oldMode: "100644", newMode: "120000" })
  expect(byPath["untracked-by-worker.log"]).toBeUndefined()
  expect(Buffer.byteLength(patch.summary!)).toBeLessThanOrEqual(2048)
  expect(patch.digest).toMatch(/^[0-9a-f]{64}$/)

  const patchFile = `${paths.patchesDir}/${record.id}.patch`
  // dir/keep.txt turns from a file into a link: written only when the caller allows links.
  await expect(applyPatch({ record: patch, patchFile, digest: patch.digest!, workspace: repo, host })).rejects.toThrow(
    /dir\/keep\.txt → \.\.\/README\.md \(it turns a file into a link\)/,
  )
  await applyPatch({ record: patch, patchFile, digest: patch.digest!, workspace: repo, host, allowLinks: true })
  expect(await listing(repo, notLogs)).toEqual(await listing(layout.tree, notLogs))
  // Nothing staged or committed: the index still holds only the user's staged edit.
  expect(await git(repo, "diff", "--cached", "--name-only")).toBe("src/a.txt\n")
  expect(await fingerprintTree(`${repo}/.git`)).toBe(metadata)

  await removeWorktree(paths, record)
  // The lane's directory stays for the next worker (OpenCode's instance for it stays warm); its files go.
  expect(existsSync(layout.tree)).toBe(false)
  expect(existsSync(layout.gitDir)).toBe(false)
  expect(await claimedLanes(paths.patchesDir)).toEqual([])
  expect((await listPatches(paths.patchesDir)).records).toEqual([])
  expect(await fingerprintTree(`${repo}/.git`)).toBe(metadata)
}, 60_000)

type Case = { repo: string; dir: string; patchFile: string; digest: string; record: PatchRecord }

const REFUSALS: Array<[string, RegExp, (c: Case) => Promise<Partial<Case> | undefined>]> = [
  ["a stale digest", /digest does not match/, async () => ({ digest: "0".repeat(64) })],
  [
    "a moved HEAD",
    /HEAD moved/,
    async ({ repo }) => void (await git(repo, "commit", "-q", "--allow-empty", "-m", "moved")),
  ],
  [
    "a target changed since the snapshot",
    /src\/a\.txt changed since the snapshot/,
    async ({ repo }) => void (await writeFile(`${repo}/src/a.txt`, "one\ntwo (staged)\nthree\nedited by the user\n")),
  ],
  [
    "a conflicting edit on the hunk's lines",
    /src\/a\.txt changed since the snapshot/,
    async ({ repo }) => void (await writeFile(`${repo}/src/a.txt`, "one\ntwo (staged)\nTHREE\n")),
  ],
  [
    "a file the patch creates already there",
    /new\.bin exists/,
    async ({ repo }) => void (await writeFile(`${repo}/new.bin`, "mine\n")),
  ],
  [
    "a symlinked parent directory",
    /added dir is a symlink/,
    async ({ repo, dir }) => {
      await mkdir(`${dir}/elsewhere`)
      await symlink(`${dir}/elsewhere`, `${repo}/added dir`)
      return undefined
    },
  ],
  [
    "another repository",
    /is not the workspace the patch was taken from/,
    async ({ repo, dir }) => {
      await cp(repo, `${dir}/copy`, { recursive: true, verbatimSymlinks: true })
      return { repo: `${dir}/copy` }
    },
  ],
  [
    "a hunk that does not apply (a patch altered on disk, its digest recomputed)",
    /a hunk does not apply/,
    async ({ patchFile, record, dir }) => {
      const bytes = await Bun.file(patchFile).bytes()
      const altered = Buffer.from(
        Buffer.from(bytes).toString("latin1").replace(" two (staged)\n three\n+four", " two (staged)\n 3\n+four"),
        "latin1",
      )
      await writeFile(`${dir}/altered.patch`, altered)
      return {
        patchFile: `${dir}/altered.patch`,
        digest: patchDigest(record.base, altered),
        record: { ...record, digest: patchDigest(record.base, altered) },
      }
    },
  ],
]

test.each(REFUSALS)(
  "patch_apply refuses %s and leaves the tree byte for byte unchanged",
  async (_, refusal, arrange) => {
    await using dir = await tempDir("oc-orch-refuse-")
    const { repo, host, paths } = await patchWorld(dir.path)
    const { record, layout } = await createWorktree(repo, { host, paths })
    await everyChange(layout.tree)
    const patch = await collectPatch(record, paths.patchesDir, host)
    const patchFile = `${paths.patchesDir}/${record.id}.patch`
    const base: Case = { repo, dir: dir.path, patchFile, digest: patch.digest!, record: patch }
    const target = { ...base, ...(await arrange(base)) }
    const before = await listing(target.repo)
    const metadata = await fingerprintTree(`${target.repo}/.git`)
    await expect(
      applyPatch({
        record: target.record,
        patchFile: target.patchFile,
        digest: target.digest,
        workspace: target.repo,
        host,
        allowLinks: true,
      }),
    ).rejects.toThrow(refusal)
    expect(await listing(target.repo)).toEqual(before)
    expect(await fingerprintTree(`${target.repo}/.git`)).toBe(metadata)
    // Control: where the repository itself was left as it was, the genuine patch applies to it.
    if (target.repo === repo && target.patchFile === patchFile && target.digest === patch.digest) return
    await applyPatch({ record: patch, patchFile, digest: patch.digest!, workspace: repo, host, allowLinks: true })
    expect(await listing(repo, notLogs)).toEqual(await listing(layout.tree, notLogs))
  },
  60_000,
)

test("a patch that changes files other programs run on their own is refused unless allow_autorun says so", async () => {
  await using dir = await tempDir("oc-orch-autorun-")
  const { repo, host, paths } = await patchWorld(dir.path)
  const { record, layout } = await createWorktree(repo, { host, paths })
  await mkdir(`${layout.tree}/.github/workflows`, { recursive: true })
  await writeFile(`${layout.tree}/.github/workflows/ci.yml`, "on: push\n")
  await writeFile(`${layout.tree}/.envrc`, "export X=1\n")
  const patch = await collectPatch(record, paths.patchesDir, host)
  const patchFile = `${paths.patchesDir}/${record.id}.patch`
  const before = await listing(repo)
  await expect(applyPatch({ record: patch, patchFile, digest: patch.digest!, workspace: repo, host })).rejects.toThrow(
    /run on their own: \.envrc, \.github\/workflows\/ci\.yml/,
  )
  expect(await listing(repo)).toEqual(before)
  await applyPatch({ record: patch, patchFile, digest: patch.digest!, workspace: repo, host, allowAutorun: true })
  expect(await Bun.file(`${repo}/.envrc`).text()).toBe("export X=1\n")
}, 60_000)

test("a patch changing what a link in an autorun entry reaches is refused; the same patch applies once the link is gone", async () => {
  await using dir = await tempDir("oc-orch-autorun-")
  const { repo, host, paths } = await patchWorld(dir.path)
  await mkdir(`${repo}/ci`)
  await writeFile(`${repo}/ci/deploy.yml`, "on: push\n")
  await mkdir(`${repo}/.github`)
  await symlink("../ci", `${repo}/.github/workflows`)
  const { record, layout } = await createWorktree(repo, { host, paths })
  await writeFile(`${layout.tree}/ci/deploy.yml`, "on: push\njobs: { x: { steps: [curl attacker] } }\n")
  const patch = await collectPatch(record, paths.patchesDir, host)
  const patchFile = `${paths.patchesDir}/${record.id}.patch`
  await expect(applyPatch({ record: patch, patchFile, digest: patch.digest!, workspace: repo, host })).rejects.toThrow(
    /run on their own: ci\/deploy\.yml\. .*reached through \.github\/workflows/,
  )
  expect(await Bun.file(`${repo}/ci/deploy.yml`).text()).toBe("on: push\n")
  // Control: without the link, ci/ is an ordinary directory and the same patch applies.
  await rm(`${repo}/.github/workflows`)
  await applyPatch({ record: patch, patchFile, digest: patch.digest!, workspace: repo, host })
  expect(await Bun.file(`${repo}/ci/deploy.yml`).text()).toContain("curl attacker")
}, 60_000)

test("a directory replaced by a file of its name, and a file replaced by a directory, round-trip", async () => {
  await using dir = await tempDir("oc-orch-dirfile-")
  const { repo, host, paths } = await patchWorld(dir.path)
  const { record, layout } = await createWorktree(repo, { host, paths })
  // dir/keep.txt was the only file of dir/: dir becomes a file; del.txt becomes a directory.
  await rm(`${layout.tree}/dir`, { recursive: true })
  await writeFile(`${layout.tree}/dir`, "now a file\n")
  await rm(`${layout.tree}/del.txt`)
  await mkdir(`${layout.tree}/del.txt`)
  await writeFile(`${layout.tree}/del.txt/inside.txt`, "now a directory\n")
  const patch = await collectPatch(record, paths.patchesDir, host)
  await applyPatch({
    record: patch,
    patchFile: `${paths.patchesDir}/${record.id}.patch`,
    digest: patch.digest!,
    workspace: repo,
    host,
  })
  expect(await listing(repo, notLogs)).toEqual(await listing(layout.tree, notLogs))
}, 60_000)

test("a stored patch changed on disk after review is refused: patch_apply re-hashes the bytes it streams", async () => {
  await using dir = await tempDir("oc-orch-tamper-")
  const { repo, host, paths } = await patchWorld(dir.path)
  const { record, layout } = await createWorktree(repo, { host, paths })
  await writeFile(`${layout.tree}/src/a.txt`, "one\ntwo (staged)\nthree\nfour\n")
  const patch = await collectPatch(record, paths.patchesDir, host)
  const patchFile = `${paths.patchesDir}/${record.id}.patch`
  const original = await Bun.file(patchFile).bytes()
  await writeFile(patchFile, Buffer.from(Buffer.from(original).toString("latin1").replace("+four", "+evil"), "latin1"))
  const before = await listing(repo)
  // A run directory a killed apply left behind goes with the next apply.
  await mkdir(`${layout.dir}/apply-deadbeef/tree`, { recursive: true })
  await expect(applyPatch({ record: patch, patchFile, digest: patch.digest!, workspace: repo, host })).rejects.toThrow(
    /does not match its digest/,
  )
  expect(existsSync(`${layout.dir}/apply-deadbeef`)).toBe(false)
  expect(await listing(repo)).toEqual(before)
  // Control: the bytes as reviewed apply.
  await writeFile(patchFile, original)
  await applyPatch({ record: patch, patchFile, digest: patch.digest!, workspace: repo, host })
  expect(await Bun.file(`${repo}/src/a.txt`).text()).toBe("one\ntwo (staged)\nthree\nfour\n")
}, 60_000)

test("an apply killed while writing (a journal, no done mark) is rolled back by the next apply, which then applies; control: without the journal the next apply is refused", async () => {
  await using dir = await tempDir("oc-orch-killed-")
  const { repo, host, paths } = await patchWorld(dir.path)
  const { record, layout } = await createWorktree(repo, { host, paths })
  await everyChange(layout.tree)
  const patch = await collectPatch(record, paths.patchesDir, host)
  const patchFile = `${paths.patchesDir}/${record.id}.patch`
  const pristine = `${dir.path}/pristine`
  await cp(repo, pristine, { recursive: true, verbatimSymlinks: true })
  // The killed apply: every file written but src/a.txt, and neither the done mark nor the cleanup.
  await applyPatch({ record: patch, patchFile, digest: patch.digest!, workspace: repo, host, allowLinks: true })
  await cp(`${pristine}/src/a.txt`, `${repo}/src/a.txt`)
  const halfWritten = await listing(repo)
  await expect(
    applyPatch({ record: patch, patchFile, digest: patch.digest!, workspace: repo, host, allowLinks: true }),
  ).rejects.toThrow(/changed since the snapshot/)
  expect(await listing(repo)).toEqual(halfWritten)
  const run = `${layout.dir}/apply-0badf00d`
  for (const file of patch.files!.filter((f) => f.oldOid)) {
    const source = file.oldPath ?? file.path
    await mkdir(dirname(`${run}/before/${source}`), { recursive: true })
    await cp(`${pristine}/${source}`, `${run}/before/${source}`, { verbatimSymlinks: true })
  }
  await writeFile(`${run}/journal.json`, JSON.stringify({ workspace: repo, files: patch.files }))
  // Someone edited a file the killed apply had written: the rollback keeps it, names it, and stops.
  await writeFile(`${repo}/new.bin`, "mine\n")
  await expect(
    applyPatch({ record: patch, patchFile, digest: patch.digest!, workspace: repo, host, allowLinks: true }),
  ).rejects.toThrow(/killed while writing; it was rolled back except for new\.bin, changed since/)
  expect(await Bun.file(`${repo}/new.bin`).text()).toBe("mine\n")
  expect(existsSync(run)).toBe(false)
  await rm(`${repo}/new.bin`)
  expect(await listing(repo)).toEqual(await listing(pristine))
  await applyPatch({ record: patch, patchFile, digest: patch.digest!, workspace: repo, host, allowLinks: true })
  expect(await listing(repo, notLogs)).toEqual(await listing(layout.tree, notLogs))
}, 60_000)
