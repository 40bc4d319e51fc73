// The guard's decisions, table-driven on real temp directories (symlinks and gitdir files need a real
// filesystem): bash refused, writes into Git metadata or out of the workspace refused with symlinks
// resolved (dangling links refused), reads that leave the workspace refused, ordinary work allowed.
import { afterAll, beforeAll, describe, expect, test } from "bun:test"
import { mkdirSync, symlinkSync, writeFileSync } from "node:fs"
import { mkdtemp, rm } from "node:fs/promises"
import { tmpdir } from "node:os"
import { canonicalTarget, refuseCall, writeTargets } from "../../plugin/guards"
import { patchTargets } from "../../plugin/files/text"
import { hostContext, hostFs } from "../../src/sandbox"
import { readFlags } from "../../src/config/flags"

let root: string
let ws: string
let linked: string
beforeAll(async () => {
  root = await mkdtemp(`${tmpdir()}/oc-orch-guards-`)
  ws = `${root}/ws`
  mkdirSync(`${ws}/.git/hooks`, { recursive: true })
  writeFileSync(`${ws}/.git/HEAD`, "ref: refs/heads/main\n")
  mkdirSync(`${ws}/src`)
  mkdirSync(`${root}/outside`)
  symlinkSync(`${root}/outside`, `${ws}/out`)
  symlinkSync(".git", `${ws}/g`)
  // Dangling links: their targets do not exist yet, so realpath cannot follow them.
  symlinkSync(`${root}/outside/authorized_keys`, `${ws}/dangling`)
  symlinkSync(`${root}/nowhere/dir`, `${ws}/dangling-dir`)
  writeFileSync(`${root}/outside/secret`, "secret\n")
  symlinkSync(`${root}/outside/secret`, `${ws}/secret-link`)
  // A work tree whose gitdir lives inside the workspace under another name (`--separate-git-dir`),
  // linked back by its core.worktree as git metadata admission requires.
  linked = `${root}/linked`
  mkdirSync(`${linked}/.meta/objects`, { recursive: true })
  writeFileSync(`${linked}/.meta/HEAD`, "ref: refs/heads/main\n")
  writeFileSync(`${linked}/.meta/config`, "[core]\n\tworktree = ..\n")
  writeFileSync(`${linked}/.git`, "gitdir: .meta\n")
})
afterAll(() => rm(root, { recursive: true, force: true }))

const host = () => hostContext(readFlags({ HOME: "/nonexistent-home" }))
const check = (tool: string, args: Record<string, unknown>, workspace = ws) =>
  refuseCall({ tool, args, workspace, host: host() }, hostFs)

describe("refused", () => {
  test.each([
    ["bash", "bash", { command: "ls" }, /built-in bash tool is disabled/],
    ["write into .git", "write", { filePath: ".git/hooks/pre-commit", content: "" }, /Git metadata is read-only/],
    [
      "edit .git by absolute path",
      "edit",
      { filePath: "WS/.git/config", oldString: "a", newString: "b" },
      /Git metadata is read-only/,
    ],
    ["a nested .git", "write", { filePath: "vendor/lib/.git/config" }, /Git metadata is read-only/],
    ["outside by absolute path", "write", { filePath: "/etc/passwd" }, /outside the workspace/],
    ["outside by ..", "write", { filePath: "src/../../outside/x" }, /outside the workspace/],
    ["outside through a symlink", "write", { filePath: "out/x.txt" }, /outside the workspace/],
    [".git through a symlink", "write", { filePath: "g/hooks/post-checkout" }, /the path is Git metadata/],
    [
      "a patch touching .git",
      "apply_patch",
      { patchText: "*** Begin Patch\n*** Add File: src/ok.ts\n+x\n*** Update File: .git/config\n*** End Patch" },
      /Git metadata is read-only/,
    ],
    [
      "a patch moving a file out",
      "apply_patch",
      { patchText: "*** Begin Patch\n*** Update File: src/a.ts\n*** Move to: ../../x.ts\n*** End Patch" },
      /outside the workspace/,
    ],
    ["a write with no target", "write", { content: "x" }, /no target path/],
    [
      "a write through a dangling symlink",
      "write",
      { filePath: "dangling", content: "ssh-ed25519 AAAA" },
      /outside the workspace/,
    ],
    ["a write under a dangling directory link", "write", { filePath: "dangling-dir/x" }, /outside the workspace/],
    ["a read through a symlink out", "read", { filePath: "secret-link" }, /outside the workspace/],
    ["a read by absolute path outside", "read", { filePath: "/etc/hostname" }, /outside the workspace/],
    ["a grep outside", "grep", { pattern: "x", path: "out" }, /outside the workspace/],
    ["a list outside", "list", { path: "/" }, /outside the workspace/],
  ] as const)("%s", (_, tool, args, reason) => {
    const fixed = Object.fromEntries(
      Object.entries(args).map(([k, v]) => [k, typeof v === "string" ? v.replace("WS", ws) : v]),
    )
    expect(check(tool, fixed)).toMatch(reason)
  })

  test("the target of a gitdir: file inside the workspace", () => {
    expect(check("write", { filePath: ".meta/hooks/pre-commit" }, linked)).toMatch(/the path is Git metadata/)
    expect(check("write", { filePath: "ok.txt" }, linked)).toBeUndefined()
  })
})

describe("allowed", () => {
  test.each([
    ["an ordinary write", "write", { filePath: "src/new.ts", content: "x" }],
    ["an absolute path inside", "edit", { filePath: "WS/src/a.ts" }],
    ["a name that merely contains .git", "write", { filePath: "docs/.gitignore-notes.md" }],
    [".gitignore", "write", { filePath: ".gitignore" }],
    ["a read of .git (reading metadata is harmless)", "read", { filePath: ".git/HEAD" }],
    ["a read inside", "read", { filePath: "src" }],
    ["a grep of the whole workspace", "grep", { pattern: "x" }],
    ["a sandbox tool", "sandbox_shell", { command: "rm -rf /" }],
  ] as const)("%s", (_, tool, args) => {
    const fixed = Object.fromEntries(
      Object.entries(args).map(([k, v]) => [k, typeof v === "string" ? v.replace("WS", ws) : v]),
    )
    expect(check(tool, fixed)).toBeUndefined()
  })
})

test("patch and argument targets", () => {
  expect(
    patchTargets("*** Add File: a\n*** Delete File: b\n*** Update File: c\n*** Move to: d\n+*** Add File: e"),
  ).toEqual(["a", "b", "c", "d"])
  // OpenCode takes the path with no space after the colon too.
  expect(patchTargets("*** Add File:/abs/x\n*** Update File:\trel")).toEqual(["/abs/x", "rel"])
  expect(writeTargets({ filePath: "x", patchText: "*** Add File: y" })).toEqual(["x", "y"])
})

test("canonicalTarget resolves the deepest existing ancestor and appends the rest", () => {
  expect(canonicalTarget(`${ws}/out/new/deeper.txt`, hostFs)).toBe(`${root}/outside/new/deeper.txt`)
  expect(canonicalTarget("/", hostFs)).toBe("/")
})
