// Nested git metadata is invisible to `git status` (git skips every `.git`), so it is found by name.
import { afterEach, expect, test } from "bun:test"
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises"
import { tmpdir } from "node:os"
import { nestedGitMetadata, snapshot } from "../../src/workspace/changes"
import { run } from "../../src/util/process"

let dir: string | undefined
afterEach(async () => dir && rm(dir, { recursive: true, force: true }))

test("finds a planted nested repository and a gitdir file, but not the workspace's own .git", async () => {
  dir = await mkdtemp(`${tmpdir()}/oc-orch-gitmeta-`)
  await run(["git", "init", "-q", dir])
  await mkdir(`${dir}/sub/.git/hooks`, { recursive: true })
  await mkdir(`${dir}/deep/er`, { recursive: true })
  await writeFile(`${dir}/deep/er/.git`, "gitdir: /tmp/elsewhere\n")
  expect(await nestedGitMetadata(dir)).toEqual(["deep/er/.git", "sub/.git"])
  // git status names neither.
  expect(Object.keys((await snapshot(dir)).entries).filter((path) => path.includes(".git"))).toEqual([])
})
