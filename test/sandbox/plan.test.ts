// The argument builder per profile, and the planner's refusals, on real temporary trees.
import { afterAll, beforeAll, describe, expect, test } from "bun:test"
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs"
import { AppError } from "../../src/errors"
import { bwrapArgs, ISOLATION_FLAGS } from "../../src/sandbox/argv"
import { hostFs, type FsView } from "../../src/sandbox/fs-view"
import { HOME_CREDENTIALS } from "../../src/sandbox/host-paths"
import { hostContext, planSandbox, type HostContext } from "../../src/sandbox/plan"
import { ALL_PROFILES, profileName, type SandboxProfile } from "../../src/sandbox/profiles"
import { readFlags } from "../../src/config/flags"

let root = ""
let host: HostContext
beforeAll(() => {
  root = mkdtempSync("/tmp/orch-plan-test-")
  mkdirSync(`${root}/ws/.git`, { recursive: true })
  writeFileSync(`${root}/ws/.git/HEAD`, "ref: refs/heads/main\n")
  mkdirSync(`${root}/ws/src`)
  mkdirSync(`${root}/home/.ssh`, { recursive: true })
  mkdirSync(`${root}/plain`)
  symlinkSync(`${root}/home`, `${root}/home-alias`)
  symlinkSync(`${root}/home/.ssh`, `${root}/plain/dotgit-target`)
  host = { home: `${root}/home`, path: "/usr/bin:/bin", trustedRoots: [], credentials: [] }
})
afterAll(() => rmSync(root, { recursive: true, force: true }))

const plan = (
  profile: SandboxProfile,
  workspace = `${root}/ws`,
  extra: Partial<HostContext> = {},
  fs: FsView = hostFs,
) => planSandbox({ profile, workspace, host: { ...host, ...extra } }, fs)
const pairs = (args: string[], flag: string) =>
  args.flatMap((arg, i) => (arg === flag ? [`${args[i + 1]} ${args[i + 2]}`] : []))

describe("bwrapArgs per profile", () => {
  const expectations: Record<string, { workspace: "--bind" | "--ro-bind"; shareNet: boolean }> = {
    scout: { workspace: "--ro-bind", shareNet: false },
    worker: { workspace: "--bind", shareNet: false },
    "runner-read_only-disabled": { workspace: "--ro-bind", shareNet: false },
    "runner-writable-disabled": { workspace: "--bind", shareNet: false },
    "runner-read_only-host": { workspace: "--ro-bind", shareNet: true },
    "runner-writable-host": { workspace: "--bind", shareNet: true },
  }
  for (const profile of ALL_PROFILES) {
    const name = profileName(profile)
    const want = expectations[name]!
    test(name, () => {
      const args = bwrapArgs(plan(profile), ["/bin/sh", "-c", "true"])
      expect(args.slice(0, ISOLATION_FLAGS.length)).toEqual([...ISOLATION_FLAGS])
      expect(args).toContain("--cap-drop")
      expect(args.includes("--share-net")).toBe(want.shareNet)
      expect(pairs(args, want.workspace)).toContain(`${root}/ws ${root}/ws`)
      // .git read-only, mounted after (on top of) the workspace.
      const gitAt = args.indexOf(`${root}/ws/.git`)
      expect(args[gitAt - 1]).toBe("--ro-bind")
      const workspaceAt = args.findIndex((arg, i) => arg === want.workspace && args[i + 1] === `${root}/ws`)
      expect(workspaceAt).toBeGreaterThan(-1)
      expect(gitAt).toBeGreaterThan(workspaceAt)
      expect(pairs(args, "--setenv")).toEqual(expect.arrayContaining(["HOME /tmp/home", "TMPDIR /tmp"]))
      expect(args.join(" ")).not.toContain(`${root}/home`)
      const hasResolver = pairs(args, "--ro-bind").some((pair) => pair.endsWith(" /etc/resolv.conf"))
      expect(hasResolver).toBe(want.shareNet)
      expect(args.slice(args.indexOf("--"))).toEqual(["--", "/bin/sh", "-c", "true"])
      expect(args[args.indexOf("--chdir") - 2]).toBe("--remount-ro")
    })
  }

  test("system layout: /usr read-only, merged-/usr symlinks, private /tmp, fresh /proc and /dev", () => {
    const args = bwrapArgs(plan({ kind: "scout" }), ["true"])
    expect(pairs(args, "--ro-bind")).toContain("/usr /usr")
    expect(pairs(args, "--symlink")).toContain("usr/bin /bin")
    for (const flag of ["--tmpfs", "--proc", "--dev"]) expect(args).toContain(flag)
    expect(args).toContain("--clearenv")
  })

  test("overlay: a read-only profile sees the workspace through a tmpfs overlay, .git still bound read-only", () => {
    const workspace = `${root}/ws`
    const planned = planSandbox(
      { profile: { kind: "runner", workspace: "read_only", network: "disabled" }, workspace, host, overlay: true },
      hostFs,
    )
    const args = bwrapArgs(planned, ["true"])
    const at = args.indexOf("--overlay-src")
    expect(args.slice(at, at + 4)).toEqual(["--overlay-src", workspace, "--tmp-overlay", workspace])
    expect(pairs(args, "--ro-bind")).toContain(`${workspace}/.git ${workspace}/.git`)
    expect(pairs(args, "--ro-bind")).not.toContain(`${workspace} ${workspace}`)
    // An overlay is its own filesystem: no identity to compare with the host's.
    expect(planned.pins.map((pin) => pin.path)).not.toContain(workspace)
    // A writable profile ignores it: its workspace is the host's own.
    const writable = planSandbox({ profile: { kind: "worker" }, workspace, host, overlay: true }, hostFs)
    expect(bwrapArgs(writable, ["true"])).not.toContain("--overlay-src")
  })

  test("an empty command is a programming error", () => {
    expect(() => bwrapArgs(plan({ kind: "scout" }), [])).toThrow()
  })
})

describe("planSandbox refuses", () => {
  const cases: [string, () => unknown, RegExp][] = [
    ["the root directory as workspace", () => plan({ kind: "worker" }, "/"), /broad system root/],
    ["HOME as workspace", () => plan({ kind: "worker" }, `${root}/home`), /HOME itself/],
    ["HOME through a symlink", () => plan({ kind: "worker" }, `${root}/home-alias`), /HOME itself/],
    ["an ancestor of HOME", () => plan({ kind: "worker" }, root), /contains HOME/],
    ["a credential store", () => plan({ kind: "scout" }, `${root}/home/.ssh`), /credential store/],
    ["a system directory", () => plan({ kind: "scout" }, "/usr/share"), /a system directory/],
    ["/etc", () => plan({ kind: "scout" }, "/etc/ssl"), /inside \/etc/],
    ["/proc", () => plan({ kind: "scout" }, "/proc/self"), /inside \/proc|broad/],
    ["/tmp itself", () => plan({ kind: "scout" }, "/tmp"), /broad system root/],
    ["a relative workspace", () => plan({ kind: "scout" }, "ws"), /not an absolute path/],
    ["a missing workspace", () => plan({ kind: "scout" }, `${root}/nope`), /does not exist/],
    ["Git metadata as workspace", () => plan({ kind: "worker" }, `${root}/ws/.git`), /Git metadata/],
    [
      "a cwd outside the workspace",
      () => planSandbox({ profile: { kind: "scout" }, workspace: `${root}/ws`, cwd: root, host }, hostFs),
      /not a directory inside the workspace/,
    ],
    [
      "host networking without a resolver",
      () =>
        plan(
          { kind: "runner", workspace: "read_only", network: "host" },
          `${root}/ws`,
          {},
          { ...hostFs, realpath: (p) => (p === "/etc/resolv.conf" ? undefined : hostFs.realpath(p)) },
        ),
      /needs \/etc\/resolv.conf/,
    ],
    [
      "host networking without a CA source",
      () =>
        plan(
          { kind: "runner", workspace: "writable", network: "host" },
          `${root}/ws`,
          {},
          {
            ...hostFs,
            realpath: (p) => (p.startsWith("/etc/ssl") || p.startsWith("/etc/pki") ? undefined : hostFs.realpath(p)),
          },
        ),
      /CA trust source/,
    ],
  ]
  for (const [name, attempt, message] of cases)
    test(name, () => {
      let error: unknown
      try {
        attempt()
      } catch (caught) {
        error = caught
      }
      expect(error).toBeInstanceOf(AppError)
      expect((error as AppError).kind).toBe("Sandbox")
      expect((error as AppError).message).toMatch(message)
    })

  test("a symlinked .git (it could redirect the read-only mount)", () => {
    const ws = mkdtempSync(`${root}/ws-`)
    symlinkSync(`${root}/plain`, `${ws}/.git`)
    expect(() => plan({ kind: "worker" }, ws)).toThrow(/is a symlink/)
  })

  test("a gitdir: pointer into a credential store", () => {
    const ws = mkdtempSync(`${root}/ws-`)
    writeFileSync(`${root}/home/.ssh/HEAD`, "ref: x\n")
    writeFileSync(`${ws}/.git`, `gitdir: ${root}/home/.ssh\n`)
    expect(() => plan({ kind: "scout" }, ws)).toThrow(/credential store/)
  })
})

describe("hostContext", () => {
  test("takes HOME, PATH, toolchain dirs, caps and XDG-relocated credential dirs from the flags", () => {
    const context = hostContext(
      readFlags({
        HOME: "/h",
        PATH: "/usr/bin",
        OPENCODE_SANDBOX_TOOLCHAIN_DIRS: "/opt/t",
        OPENCODE_SANDBOX_MAX_PROCESSES: "64",
        XDG_DATA_HOME: "/d",
      }),
    )
    expect(context).toMatchObject({ home: "/h", path: "/usr/bin", toolchainDirs: "/opt/t", caps: { maxProcesses: 64 } })
    // Only the relocated base adds entries: the HOME-relative defaults are host-paths' own list.
    expect(context.credentials).toEqual(["/d/opencode", "/d/opencode-mcp-orchestrator"])
  })

  test("a moved XDG_CONFIG_HOME carries every .config credential with it (anthropic and containers too)", () => {
    const context = hostContext(readFlags({ HOME: "/h", XDG_CONFIG_HOME: "/c" }))
    expect(context.credentials).toEqual(
      expect.arrayContaining(["/c/anthropic", "/c/containers", "/c/git/credentials", "/c/gcloud", "/c/opencode"]),
    )
  })

  test("one list: the relocated credentials are exactly HOME_CREDENTIALS under each moved base", () => {
    const moved = { XDG_CONFIG_HOME: "/c", XDG_DATA_HOME: "/d", XDG_STATE_HOME: "/s", XDG_CACHE_HOME: "/k" }
    const context = hostContext(readFlags({ HOME: "/h", ...moved }))
    const bases: [string, string][] = [
      [".config/", "/c/"],
      [".local/share/", "/d/"],
      [".local/state/", "/s/"],
      [".cache/", "/k/"],
    ]
    const expected = HOME_CREDENTIALS.flatMap((entry) => {
      const base = bases.find(([prefix]) => entry.startsWith(prefix))
      return base ? [base[1] + entry.slice(base[0].length)] : []
    })
    expect(expected.length).toBeGreaterThan(10)
    expect(context.credentials).toEqual(expected)
    // The relocation names no store of its own: a second list is where the two drifted apart before.
    const planSource = readFileSync(`${import.meta.dir}/../../src/sandbox/plan.ts`, "utf8")
    const names = HOME_CREDENTIALS.map((entry) => entry.split("/").at(-1)!).filter((name) => name !== "git")
    expect(names.filter((name) => planSource.includes(`/${name}\``) || planSource.includes(`"${name}"`))).toEqual([])
  })
})

describe("extra writable directories and our own programs (patch_apply's write step)", () => {
  const runner = { kind: "runner", workspace: "writable", network: "disabled" } as const
  const request = (extra: { writable?: string[]; programs?: string[] }) =>
    planSandbox({ profile: runner, workspace: `${root}/ws`, host, ...extra }, hostFs)

  test("a writable directory is bound read-write, a program file and a program directory read-only", () => {
    mkdirSync(`${root}/run`, { recursive: true })
    mkdirSync(`${root}/prog`, { recursive: true })
    writeFileSync(`${root}/prog/bin`, "")
    const args = bwrapArgs(request({ writable: [`${root}/run`], programs: [`${root}/prog/bin`, `${root}/prog`] }), [
      "/bin/true",
    ])
    expect(pairs(args, "--bind")).toContain(`${root}/run ${root}/run`)
    expect(pairs(args, "--ro-bind")).toEqual(
      expect.arrayContaining([`${root}/prog/bin ${root}/prog/bin`, `${root}/prog ${root}/prog`]),
    )
  })

  // Built when the test runs: the temporary root exists only from beforeAll on.
  test.each([
    ["a writable directory inside the workspace", () => ({ writable: [`${root}/ws/src`] }), /overlaps/],
    [
      "a writable directory that is HOME's credential store",
      () => ({ writable: [`${root}/home/.ssh`] }),
      /credential store/,
    ],
    ["a program that is a symlink to HOME", () => ({ programs: [`${root}/home-alias`] }), /it is HOME itself/],
    ["a program directory containing HOME", () => ({ programs: [root] }), /contains HOME/],
  ] as const)("refuses %s", (_, extra, refusal) => {
    expect(() => request(extra())).toThrow(refusal)
  })
})

describe("policy markers (mounted read-only like .git)", () => {
  const marked = (layout: (ws: string) => void) => {
    const ws = mkdtempSync(`${root}/marked-`)
    layout(ws)
    return ws
  }
  const readOnly = (ws: string, profile: SandboxProfile = { kind: "worker" }, markersWritable = false) =>
    planSandbox({ profile, workspace: ws, host, markersWritable }, hostFs)
      .mounts.filter((mount) => mount.op === "ro-bind" && mount.source.startsWith(`${ws}/`))
      .map((mount) => (mount.op === "ro-bind" ? mount.dest.slice(ws.length + 1) : ""))

  test("our folder always, .claude only when it holds a marker, for every profile, on top of the workspace", () => {
    const ws = marked((dir) => {
      mkdirSync(`${dir}/.opencode-mcp-orchestrator`)
      mkdirSync(`${dir}/.claude`)
      writeFileSync(`${dir}/.claude/sensitive`, "")
    })
    for (const profile of ALL_PROFILES) expect(readOnly(ws, profile)).toEqual([".opencode-mcp-orchestrator", ".claude"])
    const args = bwrapArgs(planSandbox({ profile: { kind: "worker" }, workspace: ws, host }, hostFs), ["true"])
    expect(args.indexOf(`${ws}/.claude`)).toBeGreaterThan(args.indexOf(ws))
  })

  test("an unmarked .claude stays writable; a symlinked folder is not mounted (the memory holds it); patch_apply's step leaves them writable", () => {
    const plain = marked((dir) => mkdirSync(`${dir}/.claude`))
    expect(readOnly(plain)).toEqual([])
    const linked = marked((dir) => {
      mkdirSync(`${dir}/real`)
      writeFileSync(`${dir}/real/sensitive`, "")
      symlinkSync("real", `${dir}/.claude`)
    })
    expect(readOnly(linked)).toEqual([])
    const ours = marked((dir) => mkdirSync(`${dir}/.opencode-mcp-orchestrator`))
    expect(readOnly(ours, { kind: "worker" }, true)).toEqual([])
  })
})
