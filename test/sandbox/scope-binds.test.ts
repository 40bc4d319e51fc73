// A scoped worker's writable paths, expanded on a real temporary tree, and what the planner mounts from
// them: the workspace read-only, each existing scope path bound writable, Git metadata read-only on top,
// symlinks and special files never bound (listed read-only instead); and the one directory bound for the
// write tool's creation of a new file the scope names (never for a path outside it, or through a link).
// Attack: a path swapped for a symlink just as the planner reads its identity is never pinned as the
// link (a scoped path stays read-only, any other mount refuses the plan); control: read as one lstat
// that takes a link's inode too (what it was), the link is pinned.
import { afterAll, beforeAll, describe, expect, test } from "bun:test"
import { lstatSync, mkdirSync, mkdtempSync, renameSync, rmSync, symlinkSync, writeFileSync } from "node:fs"
import { bwrapArgs } from "../../src/sandbox/argv"
import { type FsView, hostFs } from "../../src/sandbox/fs-view"
import { planSandbox, type HostContext } from "../../src/sandbox/plan"
import { MAX_SCOPE_BINDS, scopeBinds } from "../../src/sandbox/scope-binds"

let root = ""
let ws = ""
let host: HostContext
beforeAll(() => {
  root = mkdtempSync("/tmp/orch-scope-binds-")
  ws = `${root}/ws`
  for (const dir of [".git", "src/deep", "test/sub", "docs", "many", "outside", "home"])
    mkdirSync(`${dir === "outside" || dir === "home" ? root : ws}/${dir}`, { recursive: true })
  writeFileSync(`${ws}/.git/HEAD`, "ref: refs/heads/main\n")
  for (const file of ["a.txt", "src/x.ts", "test/a.test.ts", "test/b.test.ts", "test/sub/c.test.ts", "docs/r.md"])
    writeFileSync(`${ws}/${file}`, "x\n")
  writeFileSync(`${ws}/top.md`, "x\n")
  for (let i = 0; i <= MAX_SCOPE_BINDS; i++) writeFileSync(`${ws}/many/f${i}`, "")
  symlinkSync(`${root}/outside`, `${ws}/linked`)
  symlinkSync(`${root}/outside`, `${ws}/src/away`)
  symlinkSync(`${ws}/a.txt`, `${ws}/alias.txt`)
  host = { home: `${root}/home`, path: "/usr/bin:/bin", trustedRoots: [], credentials: [] }
})
afterAll(() => rmSync(root, { recursive: true, force: true }))

const rel = (scope: string[]) => {
  const { binds, readOnly } = scopeBinds(ws, scope, hostFs)
  return { bound: binds.map((bind) => bind.path.slice(ws.length + 1) || "."), readOnly }
}

describe("scopeBinds", () => {
  const rows: [string[], string[], string[]][] = [
    [["src/**"], ["src"], []],
    [["src"], ["src"], []],
    [["src/"], ["src"], []],
    [["a.txt"], ["a.txt"], []],
    [["test/*.test.ts"], ["test/a.test.ts", "test/b.test.ts"], []],
    [["test/?.test.ts", "test/a.test.ts"], ["test/a.test.ts", "test/b.test.ts"], []],
    [["**/*.md"], ["top.md", "docs/r.md"], []],
    [["src/**", "src/x.ts"], ["src"], []],
    [["**"], ["."], []],
    [["*.txt"], ["a.txt"], ["alias.txt (a symlink)"]],
    [[".git/**"], [], [".git (Git metadata)"]],
    [["new.ts"], [], ["new.ts (does not exist yet; create it with the write tool)"]],
    [["lib/**"], [], ["lib (does not exist yet; create it with the write tool)"]],
    [["linked/**"], [], ["linked (a symlink)"]],
    [["linked/in/**"], [], ["linked (a symlink)"]],
    [["src/away/x"], [], ["src/away (a symlink)"]],
    [["a.txt/x"], [], ["a.txt (not a directory)"]],
  ]
  for (const [scope, bound, readOnly] of rows)
    test(JSON.stringify(scope), () => expect(rel(scope)).toEqual({ bound, readOnly }))

  test("a wildcard never matches .git; a top-level * binds everything else", () => {
    const { bound } = rel(["*"])
    expect(bound).not.toContain(".git")
    expect(bound).toEqual(expect.arrayContaining(["a.txt", "src", "test", "docs"]))
  })

  test(`past ${MAX_SCOPE_BINDS} paths the rest stay read-only, each listed`, () => {
    const { bound, readOnly } = rel(["many/*"])
    expect(bound.length).toBe(MAX_SCOPE_BINDS)
    expect(readOnly.length).toBe(1)
    expect(readOnly[0]).toContain(`(over ${MAX_SCOPE_BINDS} paths)`)
  })

  test("each bind carries the identity taken before its checks", () => {
    const { binds } = scopeBinds(ws, ["src/**"], hostFs)
    expect(binds).toEqual([{ path: `${ws}/src`, id: hostFs.identity!(`${ws}/src`)! }])
  })
})

describe("scopeBinds creating a new file", () => {
  const creating = (scope: string[], path: string) =>
    scopeBinds(ws, scope, hostFs, { creating: path }).binds.map((bind) => bind.path.slice(ws.length + 1) || ".")
  const rows: [string[], string, string[]][] = [
    // The scope names it, nothing covers it: the deepest existing directory on its way, bound files under it folded in.
    [["test/*.test.ts"], "test/c.test.ts", ["test"]],
    [["lib/**"], "lib/deep/x.ts", ["."]],
    [["src/deep/new/*.ts"], "src/deep/new/x.ts", ["src/deep"]],
    [["new.ts"], "new.ts", ["."]],
    // Covered already: nothing more.
    [["src/**"], "src/new.ts", ["src"]],
    // Not the scope's, already there, Git metadata, out of the workspace, or through a link: nothing more.
    [["test/*.test.ts"], "test/sub/d.test.ts", ["test/a.test.ts", "test/b.test.ts"]],
    [["test/*.test.ts"], "test/a.test.ts", ["test/a.test.ts", "test/b.test.ts"]],
    [["*.txt"], "alias.txt", ["a.txt"]],
    [["**/pre-commit"], ".git/hooks/pre-commit", []],
    [["linked/**"], "linked/x.ts", []],
    [["src/away/**"], "src/away/new/x.ts", []],
    [["new.ts"], "../new.ts", []],
  ]
  for (const [scope, path, bound] of rows)
    test(`${JSON.stringify(scope)} creating ${path}`, () => expect(creating(scope, path).sort()).toEqual(bound))

  test("the plan binds that directory only when asked, with its identity pinned", () => {
    const plan = planSandbox(
      { profile: { kind: "worker" }, workspace: ws, host, scope: ["test/*.test.ts"], creating: "test/c.test.ts" },
      hostFs,
    )
    expect(plan.pins).toContainEqual({ path: `${ws}/test`, id: hostFs.identity!(`${ws}/test`)! })
    const plain = planSandbox({ profile: { kind: "worker" }, workspace: ws, host, scope: ["test/*.test.ts"] }, hostFs)
    expect(plain.mounts.some((mount) => mount.op === "bind" && mount.dest === `${ws}/test`)).toBe(false)
  })
})

describe("a scoped plan", () => {
  const pairs = (args: string[], flag: string) =>
    args.flatMap((arg, i) => (arg === flag ? [`${args[i + 1]} ${args[i + 2]}`] : []))

  test("worker: the workspace read-only, the scope writable, .git read-only above a whole-workspace scope", () => {
    const plan = planSandbox({ profile: { kind: "worker" }, workspace: ws, host, scope: ["src/**", "a.txt"] }, hostFs)
    const args = bwrapArgs(plan, ["true"])
    expect(pairs(args, "--ro-bind")).toContain(`${ws} ${ws}`)
    expect(pairs(args, "--bind").sort()).toEqual([`${ws}/a.txt ${ws}/a.txt`, `${ws}/src ${ws}/src`])
    expect(plan.pins.map((pin) => pin.path)).toEqual(expect.arrayContaining([`${ws}/src`, `${ws}/a.txt`]))
    expect(plan.readOnlyScope).toBeUndefined()
    const whole = bwrapArgs(planSandbox({ profile: { kind: "worker" }, workspace: ws, host, scope: ["**"] }, hostFs), [
      "true",
    ])
    const bindAt = whole.findIndex((arg, i) => arg === "--bind" && whole[i + 1] === ws)
    const gitAt = whole.findIndex((arg, i) => arg === "--ro-bind" && whole[i + 1] === `${ws}/.git`)
    expect(bindAt).toBeGreaterThan(-1)
    expect(gitAt).toBeGreaterThan(bindAt)
  })

  test("an empty scope binds nothing writable; a scout or an unscoped worker is as before", () => {
    const none = planSandbox({ profile: { kind: "worker" }, workspace: ws, host, scope: [] }, hostFs)
    expect(pairs(bwrapArgs(none, ["true"]), "--bind")).toEqual([])
    const scout = planSandbox({ profile: { kind: "scout" }, workspace: ws, host, scope: ["src/**"] }, hostFs)
    expect(pairs(bwrapArgs(scout, ["true"]), "--bind")).toEqual([])
    const open = planSandbox({ profile: { kind: "worker" }, workspace: ws, host }, hostFs)
    expect(pairs(bwrapArgs(open, ["true"]), "--bind")).toEqual([`${ws} ${ws}`])
  })

  test("the paths left read-only are in the plan for the shell to say", () => {
    const plan = planSandbox({ profile: { kind: "worker" }, workspace: ws, host, scope: ["linked/**"] }, hostFs)
    expect(plan.readOnlyScope).toEqual(["linked (a symlink)"])
  })
})

describe("a path swapped for a symlink while the planner reads it", () => {
  /** Before the identity of `at` is read, a symlink to `away` takes its place; the path is put back at once. */
  const swappingAt = (at: string, away: string, identity: FsView["identity"]): FsView => {
    let swaps = 0
    return {
      ...hostFs,
      identity(path) {
        if (path !== at || swaps++) return identity!(path)
        renameSync(at, `${at}.real`)
        symlinkSync(away, at)
        try {
          return identity!(path)
        } finally {
          rmSync(at)
          renameSync(`${at}.real`, at)
        }
      },
    }
  }
  /** What `identity` was: one lstat, a symlink's inode included. */
  const linkIdentity = (path: string) => {
    const stat = lstatSync(path, { bigint: true, throwIfNoEntry: false })
    return stat ? `${stat.dev}:${stat.ino}` : undefined
  }

  test("attack: a scoped directory that was a link when its identity was read stays read-only", () => {
    const fs = swappingAt(`${ws}/src`, `${root}/outside`, hostFs.identity)
    expect(scopeBinds(ws, ["src/**"], fs)).toEqual({ binds: [], readOnly: ["src (changed while it was checked)"] })
    const again = swappingAt(`${ws}/src`, `${root}/outside`, hostFs.identity)
    const plan = planSandbox({ profile: { kind: "worker" }, workspace: ws, host, scope: ["src/**"] }, again)
    expect(plan.mounts.some((mount) => mount.op === "bind" && mount.dest === `${ws}/src`)).toBe(false)
  })

  test("control: with the link's own inode for its identity, the link is pinned and the directory bound", () => {
    // The pin a sandbox passes while `src` is the link again, with the link's target mounted on the directory.
    const fs = swappingAt(`${ws}/src`, `${root}/outside`, linkIdentity)
    const { binds } = scopeBinds(ws, ["src/**"], fs)
    expect(binds).toHaveLength(1)
    expect(binds[0]!.id).not.toBe(hostFs.identity!(`${ws}/src`))
  })

  test("attack: a read-only directory that is a link when its pin is read refuses the plan", () => {
    const fs = swappingAt(`${root}/outside`, `${root}/home`, hostFs.identity)
    const request = { profile: { kind: "worker" as const }, workspace: ws, host, readOnly: [`${root}/outside`] }
    expect(() => planSandbox(request, fs)).toThrow(`${root}/outside changed while the sandbox checked it`)
    // Control: unswapped, the same request plans with the directory pinned.
    const plan = planSandbox(request, hostFs)
    expect(plan.pins).toContainEqual({ path: `${root}/outside`, id: hostFs.identity!(`${root}/outside`)! })
  })
})
