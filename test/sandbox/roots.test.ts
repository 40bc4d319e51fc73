// Which repositories hold a directory (src/sandbox/roots.ts), on fake trees: a `.git` a worker can
// plant (a directory, a pointer to a gitdir of its own, a pointer borrowing another worktree's gitdir)
// does not end the walk, so the repository around it still counts; a linked worktree git links both
// ways (`.claude/worktrees/x`) is a checkout of its own and does (the control).
import { describe, expect, test } from "bun:test"
import { resolve } from "node:path"
import { autorunHitIn, repositoryPrefix, repositoryPrefixes, repositoryRoots, type FsView } from "../../src/sandbox"

/** `dirs` are directories, `files` path → text; realpath normalises and answers for what exists. */
function tree(dirs: string[], files: Record<string, string> = {}): FsView {
  const kind = (path: string) => (dirs.includes(path) ? "dir" : path in files ? "file" : undefined)
  return {
    lstat: (path) => kind(resolve(path)),
    realpath: (path) => (kind(resolve(path)) ? resolve(path) : undefined),
    readText: (path) => files[resolve(path)],
    list: () => undefined,
  }
}

const GENUINE = {
  "/r/.claude/worktrees/x/.git": "gitdir: /r/.git/worktrees/x\n",
  "/r/.git/worktrees/x/gitdir": "/r/.claude/worktrees/x/.git\n",
  "/r/.git/worktrees/x/HEAD": "ref: refs/heads/x\n",
}
const DIRS = ["/r/.git", "/r/.git/worktrees/x", "/r/.github", "/r/.claude/worktrees/x", "/r/.fake"]

describe("a planted .git does not end the walk", () => {
  test.each([
    ["an empty directory", ["/r/.github/.git"], {}],
    [
      "a pointer to a gitdir the worker made, naming it back",
      ["/r/.fake"],
      { "/r/.github/.git": "gitdir: ../.fake", "/r/.fake/gitdir": "/r/.github/.git" },
    ],
    ["a pointer borrowing a genuine worktree's gitdir", [], { "/r/.github/.git": "gitdir: /r/.git/worktrees/x" }],
    ["a pointer with no gitdir line", [], { "/r/.github/.git": "nothing here" }],
  ])("%s: both repositories count, and workflows/ is a workflow", (_, dirs, files) => {
    const fs = tree([...DIRS, ...dirs], { ...GENUINE, ...files })
    expect(repositoryRoots("/r/.github", fs)).toEqual(["/r/.github", "/r"])
    expect(repositoryPrefixes("/r/.github", fs)).toEqual(["", ".github"])
    expect(repositoryPrefix("/r/.github", fs)).toBe("")
    expect(autorunHitIn(repositoryPrefixes("/r/.github", fs), "workflows/deploy.yml")?.path).toBe("workflows")
    // Control: the nearest prefix alone, as before, sees an ordinary file.
    expect(autorunHitIn(repositoryPrefix("/r/.github", fs), "workflows/deploy.yml")).toBeUndefined()
  })
})

describe("a genuine linked worktree is a root of its own", () => {
  test("git's two-way link ends the walk: files in .claude/worktrees/x are not .claude's", () => {
    const fs = tree(DIRS, GENUINE)
    expect(repositoryRoots("/r/.claude/worktrees/x/src", fs)).toEqual(["/r/.claude/worktrees/x"])
    expect(repositoryPrefixes("/r/.claude/worktrees/x", fs)).toEqual([""])
    expect(autorunHitIn(repositoryPrefixes("/r/.claude/worktrees/x", fs), "src/x.ts")).toBeUndefined()
    // A relative gitdir, as `git worktree add --relative-paths` writes it, links the same way.
    const relative = tree(DIRS, { ...GENUINE, "/r/.claude/worktrees/x/.git": "gitdir: ../../../.git/worktrees/x" })
    expect(repositoryRoots("/r/.claude/worktrees/x", relative)).toEqual(["/r/.claude/worktrees/x"])
  })
  test("outside any repository the workspace is its own root", () => {
    expect(repositoryRoots("/plain/dir", tree([]))).toEqual([])
    expect(repositoryPrefixes("/plain/dir", tree([]))).toEqual([""])
  })
})
