// Git metadata admission by git's own two-way links, table-driven on real trees made by the real git
// (a linked worktree, an absorbed submodule, a separate git dir) beside pointers written by hand the way
// an archive or a worker's shell would: each forged one is refused, each genuine one admitted.
import { afterAll, beforeAll, describe, expect, test } from "bun:test"
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs"
import { AppError } from "../../src/errors"
import { hostFs } from "../../src/sandbox/fs-view"
import { coreWorktree, gitMetadataPaths } from "../../src/sandbox/git-metadata"
import { pathRules, type PathRules } from "../../src/sandbox/host-paths"
import { run } from "../../src/util/process"
import { git as gitIn } from "../helpers/git"

let root = ""
let rules: PathRules
// Submodules are added from local paths, which git refuses by default since 2.38.
const git = (cwd: string, ...args: string[]) => gitIn(cwd, "-c", "protocol.file.allow=always", ...args)
const repo = async (dir: string, ...init: string[]) => {
  mkdirSync(dir, { recursive: true })
  writeFileSync(`${dir}/README.md`, "# r\n")
  await git(dir, "init", "-q", ...init)
  await git(dir, "add", ".")
  await git(dir, "commit", "-qm", "initial")
}
/** A fresh directory holding only a `.git` file with this text, as an attacker would write it. */
const pointerWorkspace = (text: string) => {
  const ws = mkdtempSync(`${root}/ws-`)
  writeFileSync(`${ws}/.git`, text)
  return ws
}

beforeAll(async () => {
  root = mkdtempSync("/tmp/orch-gitmeta-test-")
  const home = `${root}/home`
  mkdirSync(`${home}/.ssh`, { recursive: true })
  writeFileSync(`${home}/.ssh/id_rsa`, "KEY\n")
  writeFileSync(`${home}/.ssh/HEAD`, "ref: refs/heads/main\n")
  rules = pathRules(home, [], hostFs)
  await repo(`${root}/main`)
  await git(`${root}/main`, "worktree", "add", "-q", `${root}/linked`)
  await git(`${root}/main`, "worktree", "add", "-q", `${root}/other-linked`)
  await repo(`${root}/victim`)
  await repo(`${root}/sub`)
  await git(`${root}/main`, "submodule", "add", "-q", `${root}/sub`, "mods/sub")
  await repo(`${root}/separate`, `--separate-git-dir=${root}/separate.git`)
  await repo(`${root}/separate-linked`, `--separate-git-dir=${root}/separate-linked.git`)
  await git(`${root}/separate-linked`, "config", "core.worktree", `${root}/separate-linked`)
  // A bare dotfiles repository in HOME, whose work tree is HOME (`config` alias style).
  await git(root, "init", "-q", "--bare", `${home}/.dotfiles`)
  await git(root, `--git-dir=${home}/.dotfiles`, "config", "core.worktree", home)
  // A genuine worktree of that dotfiles repository: linked both ways, but it is HOME's repository.
  await git(home, `--git-dir=${home}/.dotfiles`, `--work-tree=${home}`, "add", ".ssh/id_rsa")
  await git(home, `--git-dir=${home}/.dotfiles`, `--work-tree=${home}`, "commit", "-qm", "keys")
  await git(root, `--git-dir=${home}/.dotfiles`, "worktree", "add", "-q", `${root}/dotfiles-linked`)
  // FIFOs where a pointer or a back-link file belongs: a reader that opened them would block.
  mkdirSync(`${root}/fifo-dotgit`)
  await run(["mkfifo", `${root}/fifo-dotgit/.git`])
  const backlink = `${root}/fifo-backlink`
  mkdirSync(`${backlink}/.meta/worktrees/x`, { recursive: true })
  writeFileSync(`${backlink}/.git`, "gitdir: .meta/worktrees/x\n")
  writeFileSync(`${backlink}/.meta/HEAD`, "ref: refs/heads/main\n")
  writeFileSync(`${backlink}/.meta/worktrees/x/HEAD`, "ref: refs/heads/main\n")
  writeFileSync(`${backlink}/.meta/worktrees/x/commondir`, "../..\n")
  await run(["mkfifo", `${backlink}/.meta/worktrees/x/gitdir`])
  // A genuine worktree of a repository kept inside a credential store: linked, still never mounted.
  await repo(`${home}/.aws/tools`)
  await git(`${home}/.aws/tools`, "worktree", "add", "-q", `${root}/aws-linked`)
}, 60_000)
afterAll(() => rmSync(root, { recursive: true, force: true }))

const paths = (ws: string) => gitMetadataPaths(ws, rules, hostFs)
function refusalOf(ws: string): string {
  try {
    paths(ws)
  } catch (error) {
    expect(error).toBeInstanceOf(AppError)
    expect((error as AppError).kind).toBe("Sandbox")
    expect((error as AppError).hint).toBeTruthy()
    return `${(error as AppError).message}\nnext: ${(error as AppError).hint}`
  }
  throw new Error(`${ws} was admitted: ${JSON.stringify(paths(ws))}`)
}

describe("admitted: links git made both ways", () => {
  test("no .git: nothing to mount", () => expect(paths(mkdtempSync(`${root}/ws-`))).toEqual([]))
  test("a plain clone's .git directory", () => expect(paths(`${root}/victim`)).toEqual([`${root}/victim/.git`]))
  test("a `git worktree add` worktree: its .git file, its gitdir and the common dir", () =>
    expect(paths(`${root}/linked`)).toEqual([
      `${root}/linked/.git`,
      `${root}/main/.git/worktrees/linked`,
      `${root}/main/.git`,
    ]))
  test("the same worktree with its pointer rewritten relative (git's --relative-paths form)", () => {
    writeFileSync(`${root}/other-linked/.git`, "gitdir: ../main/.git/worktrees/other-linked\n")
    expect(paths(`${root}/other-linked`)).toEqual([
      `${root}/other-linked/.git`,
      `${root}/main/.git/worktrees/other-linked`,
      `${root}/main/.git`,
    ])
  })
  test("an absorbed submodule: core.worktree in its modules dir names it", () =>
    expect(paths(`${root}/main/mods/sub`)).toEqual([
      `${root}/main/mods/sub/.git`,
      `${root}/main/.git/modules/mods/sub`,
    ]))
  test("a --separate-git-dir repository once core.worktree records the link", () =>
    expect(paths(`${root}/separate-linked`)).toEqual([`${root}/separate-linked/.git`, `${root}/separate-linked.git`]))
})

describe("refused: pointers without a link back, with the rule and the fix", () => {
  const cases: [string, () => string, RegExp][] = [
    [
      "a pointer at another repository's .git",
      () => pointerWorkspace(`gitdir: ${root}/victim/.git\n`),
      /does not link back to this workspace/,
    ],
    ["the same, relative", () => pointerWorkspace("gitdir: ../victim/.git\n"), /does not link back to this workspace/],
    [
      "a pointer at another worktree's gitdir",
      () => pointerWorkspace(`gitdir: ${root}/main/.git/worktrees/linked\n`),
      /does not link back to this worktree/,
    ],
    [
      "a pointer at a submodule's modules dir from elsewhere",
      () => pointerWorkspace(`gitdir: ${root}/main/.git/modules/mods/sub\n`),
      /core\.worktree is .*mods\/sub, not/,
    ],
    [
      "a pointer at a bare dotfiles repository in HOME",
      () => pointerWorkspace(`gitdir: ${root}/home/.dotfiles\n`),
      /core\.worktree is .*\/home, not/,
    ],
    ["a pointer into a credential store", () => pointerWorkspace(`gitdir: ${root}/home/.ssh\n`), /credential store/],
    ["a pointer at HOME", () => pointerWorkspace(`gitdir: ${root}/home\n`), /HOME itself/],
    ["a --separate-git-dir repository without core.worktree", () => `${root}/separate`, /core\.worktree is not set/],
    [
      "a genuine worktree whose repository is inside a credential store",
      () => `${root}/aws-linked`,
      /credential store/,
    ],
    ["a genuine worktree of HOME's dotfiles repository", () => `${root}/dotfiles-linked`, /is the repository of HOME/],
    [
      "a FIFO as the .git file (refused at once, never read)",
      () => `${root}/fifo-dotgit`,
      /is a special file, not a directory or a gitdir file/,
    ],
    ["a FIFO as a gitdir's back-link file", () => `${root}/fifo-backlink`, /does not link back to this worktree/],
    [
      "a forged worktrees/<name> in the workspace whose commondir names the dotfiles repository",
      () => {
        const ws = pointerWorkspace("gitdir: .meta/worktrees/x\n")
        mkdirSync(`${ws}/.meta/worktrees/x`, { recursive: true })
        writeFileSync(`${ws}/.meta/worktrees/x/HEAD`, "ref: refs/heads/main\n")
        writeFileSync(`${ws}/.meta/worktrees/x/gitdir`, `${ws}/.git\n`)
        writeFileSync(`${ws}/.meta/worktrees/x/commondir`, `${root}/home/.dotfiles\n`)
        return ws
      },
      /is not one of its worktrees/,
    ],
    [
      "a gitdir of its own whose commondir names another repository",
      () => {
        const ws = pointerWorkspace("gitdir: .meta\n")
        mkdirSync(`${ws}/.meta`)
        writeFileSync(`${ws}/.meta/HEAD`, "ref: refs/heads/main\n")
        writeFileSync(`${ws}/.meta/commondir`, `${root}/victim/.git\n`)
        return ws
      },
      /is not one of its worktrees/,
    ],
    [
      "a .git directory whose commondir names the dotfiles repository",
      () => {
        const ws = mkdtempSync(`${root}/ws-`)
        mkdirSync(`${ws}/.git`)
        writeFileSync(`${ws}/.git/HEAD`, "ref: refs/heads/main\n")
        writeFileSync(`${ws}/.git/commondir`, `${root}/home/.dotfiles\n`)
        return ws
      },
      /names a common dir/,
    ],
    [
      "a symlinked .git",
      () => {
        const ws = mkdtempSync(`${root}/ws-`)
        symlinkSync(`${root}/victim/.git`, `${ws}/.git`)
        return ws
      },
      /is a symlink/,
    ],
    ["a .git file with no gitdir line", () => pointerWorkspace("nothing here\n"), /has no "gitdir:" line/],
    ["a pointer at nothing", () => pointerWorkspace(`gitdir: ${root}/nowhere\n`), /does not exist/],
  ]
  test.each(cases)("%s", (_, make, rule) => {
    const text = refusalOf(make())
    expect(text).toMatch(rule)
    expect(text).toMatch(/^Refusing workspace \/.*: its Git metadata /)
    expect(text).toContain("next: ")
  })

  test("the unlinked refusal says how to record the link, or to delete the pointer", () => {
    const ws = pointerWorkspace(`gitdir: ${root}/victim/.git\n`)
    const text = refusalOf(ws)
    expect(text).toContain(`git --git-dir=${root}/victim/.git config core.worktree ${ws}`)
    expect(text).toContain(`delete ${ws}/.git`)
  })
})

describe("coreWorktree reads the config as a file", () => {
  test.each([
    ["[core]\n\tworktree = ../../x\n", "../../x"],
    ['[core]\n\tworktree = "/a b"\n', "/a b"],
    ["[core]\n\tworktree = /a ; a comment\n", "/a"],
    ["[CORE]\n\tWorkTree = /a\n", "/a"],
    ["[core]\n\tworktree = /a\n[core]\n\tworktree = /b\n", "/b"],
    ['[core "x"]\n\tworktree = /a\n', undefined],
    ["[remote]\n\tworktree = /a\n", undefined],
    ["worktree = /a\n", undefined],
    ["[core]\n\tworktree = /a\\\\b\n", undefined],
    ["[core]\n\tworktree =\n", undefined],
    ["", undefined],
  ] as const)("%j → %p", (config, want) => expect(coreWorktree(config)).toBe(want))
})
