// Our cache dir is tool state and refused as a workspace; the one exception is an isolated worktree
// the engine created (registered under the state dir), and only for the engine's own sessions: a
// caller's cwd naming it, however spelled, is still refused.
import { expect, test } from "bun:test"
import { mkdir, symlink, writeFile } from "node:fs/promises"
import { readFlags } from "../../src/config/flags"
import { resolvePaths } from "../../src/config/paths"
import { admitWorkspace, hostFs, hostContext, OPEN_POLICY, planSandbox } from "../../src/sandbox"
import { canonicalWorkspace } from "../../src/workspace/root"
import { tempDir } from "../helpers/temp"

const ID = "patch_m0abc_0123abcd"

async function setup(dir: string) {
  const env = { HOME: `${dir}/home`, PATH: "/usr/bin:/bin" }
  const host = hostContext(readFlags(env))
  const paths = resolvePaths(readFlags(env))
  await mkdir(`${paths.worktreesDir}/${ID}/tree`, { recursive: true })
  await mkdir(`${paths.worktreesDir}/patch_m0abc_ffffffff/tree`, { recursive: true })
  await mkdir(`${paths.cacheDir}/other`, { recursive: true })
  await mkdir(`${paths.patchesDir}/lanes`, { recursive: true })
  await writeFile(`${paths.patchesDir}/${ID}.json`, "{}")
  // Lanes: lane-1 claimed (its claim is in the registry), lane-2 not, lane-01 not a lane name.
  for (const lane of ["lane-1", "lane-2", "lane-01"])
    await mkdir(`${paths.worktreesDir}/${lane}/tree`, { recursive: true })
  await writeFile(`${paths.patchesDir}/lanes/lane-1.json`, "{}")
  await writeFile(`${paths.patchesDir}/lanes/lane-01.json`, "{}")
  return { host, paths }
}

test("a claimed lane is admitted for the engine and the plugin; an unclaimed one, or a name that is not a lane's, is not", async () => {
  await using dir = await tempDir("oc-orch-wt-admit-")
  const { host, paths } = await setup(dir.path)
  const lane = `${paths.worktreesDir}/lane-1/tree`
  expect(admitWorkspace(lane, host, OPEN_POLICY, hostFs)).toBe(lane)
  expect(planSandbox({ profile: { kind: "worker" }, workspace: lane, host }, hostFs).workspace).toBe(lane)
  expect(() => admitWorkspace(`${paths.worktreesDir}/lane-2/tree`, host, OPEN_POLICY, hostFs)).toThrow(
    /credential store/,
  )
  expect(() => admitWorkspace(`${paths.worktreesDir}/lane-01/tree`, host, OPEN_POLICY, hostFs)).toThrow(
    /credential store/,
  )
  // A caller's cwd naming the claimed lane is still refused.
  await expect(canonicalWorkspace(lane, host, OPEN_POLICY)).rejects.toThrow(/credential store/)
})

test("a registered worktree is admitted for the engine and the plugin; planSandbox mounts it", async () => {
  await using dir = await tempDir("oc-orch-wt-admit-")
  const { host, paths } = await setup(dir.path)
  const tree = `${paths.worktreesDir}/${ID}/tree`
  expect(admitWorkspace(tree, host, OPEN_POLICY, hostFs)).toBe(tree)
  expect(await canonicalWorkspace(tree, host, OPEN_POLICY, true)).toBe(tree)
  expect(planSandbox({ profile: { kind: "worker" }, workspace: tree, host }, hostFs).workspace).toBe(tree)
})

test.each([
  ["an unregistered worktree", (p: ReturnType<typeof resolvePaths>) => `${p.worktreesDir}/patch_m0abc_ffffffff/tree`],
  ["the worktrees root", (p: ReturnType<typeof resolvePaths>) => p.worktreesDir],
  ["another directory of our cache", (p: ReturnType<typeof resolvePaths>) => `${p.cacheDir}/other`],
  ["the registry itself", (p: ReturnType<typeof resolvePaths>) => p.patchesDir],
])("%s is refused even for the engine", async (_, pick) => {
  await using dir = await tempDir("oc-orch-wt-admit-")
  const { host, paths } = await setup(dir.path)
  expect(() => admitWorkspace(pick(paths), host, OPEN_POLICY, hostFs)).toThrow(/credential store/)
})

test("a caller's cwd naming a registered worktree is refused, directly or through a symlink", async () => {
  await using dir = await tempDir("oc-orch-wt-admit-")
  const { host, paths } = await setup(dir.path)
  const tree = `${paths.worktreesDir}/${ID}/tree`
  await symlink(tree, `${dir.path}/alias`)
  await expect(canonicalWorkspace(tree, host, OPEN_POLICY)).rejects.toThrow(/credential store/)
  await expect(canonicalWorkspace(`${dir.path}/alias`, host, OPEN_POLICY)).rejects.toThrow(/credential store/)
  // Control: the same host with the engine's flag admits it, so the refusal above is the caller rule.
  expect(await canonicalWorkspace(`${dir.path}/alias`, host, OPEN_POLICY, true)).toBe(tree)
})

test("planSandbox's extra read-only directories are admitted like a workspace and never overlap it", async () => {
  await using dir = await tempDir("oc-orch-wt-admit-")
  const { host, paths } = await setup(dir.path)
  const container = `${paths.worktreesDir}/${ID}`
  await mkdir(`${dir.path}/repo`)
  const plan = planSandbox(
    {
      profile: { kind: "runner", workspace: "writable", network: "disabled" },
      workspace: container,
      readOnly: [`${dir.path}/repo`],
      host,
    },
    hostFs,
  )
  expect(plan.mounts).toContainEqual({ op: "ro-bind", source: `${dir.path}/repo`, dest: `${dir.path}/repo` })
  expect(plan.mounts).toContainEqual({ op: "bind", source: container, dest: container })
  expect(() =>
    planSandbox(
      { profile: { kind: "scout" }, workspace: container, readOnly: [`${paths.cacheDir}/other`], host },
      hostFs,
    ),
  ).toThrow(/credential store/)
  expect(() =>
    planSandbox({ profile: { kind: "scout" }, workspace: container, readOnly: [`${container}/tree`], host }, hostFs),
  ).toThrow(/overlaps/)
})

test("with an owner (a continue), a lane is admitted only while its claim names that patch; a garbage or another's claim admits nobody", async () => {
  await using dir = await tempDir("oc-orch-wt-admit-")
  const { host, paths } = await setup(dir.path)
  const lane = `${paths.worktreesDir}/lane-1/tree`
  const owned = (owner: string) => ({ ...host, worktrees: { ...host.worktrees!, owner } })
  const claim = (patchId: string) => JSON.stringify({ patchId, taskId: "task_x", ownerPid: 1, since: "now" })
  await writeFile(`${paths.patchesDir}/lanes/lane-1.json`, claim(ID))
  expect(admitWorkspace(lane, owned(ID), OPEN_POLICY, hostFs)).toBe(lane)
  // Control: without an owner the claim's existence admits it, whoever holds it.
  await writeFile(`${paths.patchesDir}/lanes/lane-1.json`, claim("patch_m0abc_ffffffff"))
  expect(admitWorkspace(lane, host, OPEN_POLICY, hostFs)).toBe(lane)
  for (const text of [claim("patch_m0abc_ffffffff"), "not json", "{}", JSON.stringify({ patchId: 7 }), "null"]) {
    await writeFile(`${paths.patchesDir}/lanes/lane-1.json`, text)
    expect(() => admitWorkspace(lane, owned(ID), OPEN_POLICY, hostFs)).toThrow(/credential store/)
  }
  // A worktree made before lanes is admitted for its own patch only.
  const tree = `${paths.worktreesDir}/${ID}/tree`
  expect(admitWorkspace(tree, owned(ID), OPEN_POLICY, hostFs)).toBe(tree)
  expect(() => admitWorkspace(tree, owned("patch_m0abc_ffffffff"), OPEN_POLICY, hostFs)).toThrow(/credential store/)
})
