// Nested git metadata is invisible to `git status` (git skips every `.git`), so it is found by name.
import { afterEach, expect, test } from "bun:test"
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises"
import { tmpdir } from "node:os"
import { gitMetadataChanges, nestedGitMetadata, snapshot } from "../../src/workspace/changes"
import { run } from "../../src/util/process"

let dir: string | undefined
afterEach(async () => dir && rm(dir, { recursive: true, force: true }))

test("finds a planted nested repository and a gitdir file, but not the workspace's own .git", async () => {
  dir = await mkdtemp(`${tmpdir()}/oc-orch-gitmeta-`)
  await run(["git", "init", "-q", dir])
  await mkdir(`${dir}/sub/.git/hooks`, { recursive: true })
  await mkdir(`${dir}/deep/er`, { recursive: true })
  await writeFile(`${dir}/deep/er/.git`, "gitdir: /tmp/elsewhere\n")
  const before = await nestedGitMetadata(dir)
  expect(Object.keys(before)).toEqual(["deep/er/.git", "sub/.git"])
  // git status names neither.
  expect(Object.keys((await snapshot(dir)).entries).filter((path) => path.includes(".git"))).toEqual([])
})

test("a changed hook or config of an existing nested repository counts, an untouched one does not", async () => {
  dir = await mkdtemp(`${tmpdir()}/oc-orch-gitmeta-`)
  await mkdir(`${dir}/vendor/lib/.git/hooks`, { recursive: true })
  await writeFile(`${dir}/vendor/lib/.git/config`, "[core]\n")
  await mkdir(`${dir}/other/.git`, { recursive: true })
  const before = await nestedGitMetadata(dir)
  await writeFile(`${dir}/vendor/lib/.git/hooks/post-checkout`, "#!/bin/sh\necho pwned\n")
  await mkdir(`${dir}/new/.git`, { recursive: true })
  expect(gitMetadataChanges(before, await nestedGitMetadata(dir))).toEqual(["new/.git (new)", "vendor/lib/.git (changed)"])
  await writeFile(`${dir}/vendor/lib/.git/config`, "[core]\n\tfsmonitor = /tmp/x\n")
  expect(gitMetadataChanges(before, await nestedGitMetadata(dir))).toContain("vendor/lib/.git (changed)")
})
