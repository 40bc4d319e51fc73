// PATH and trusted roots: what is kept, in what order, and what is refused.
import { afterAll, beforeAll, describe, expect, test } from "bun:test"
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs"
import { hostFs } from "../../src/sandbox/fs-view"
import { pathRules } from "../../src/sandbox/host-paths"
import {
  DEFAULT_PATH,
  inheritedUsrEntries,
  resolveToolchain,
  type TrustedRootInput,
} from "../../src/sandbox/toolchains"

let root = ""
beforeAll(() => {
  root = mkdtempSync("/tmp/orch-toolchain-test-")
  for (const dir of [
    "rt/bin",
    "rt/share",
    "extra/bin",
    "home/.ssh",
    "home/.config/opencode",
    "home/.nvm/bin",
    "repo/.git",
    "bare/objects",
  ])
    mkdirSync(`${root}/${dir}`, { recursive: true })
  writeFileSync(`${root}/bare/HEAD`, "ref: refs/heads/main\n")
  symlinkSync("/usr/bin", `${root}/usr-alias`)
  symlinkSync("/etc", `${root}/rt/etc-link`)
})
afterAll(() => rmSync(root, { recursive: true, force: true }))

const rules = () => pathRules(`${root}/home`, [], hostFs)
const resolve = (roots: TrustedRootInput[], dirs?: string, path = "/usr/bin") =>
  resolveToolchain(path, roots, dirs, rules(), hostFs)

describe("inherited PATH", () => {
  test("keeps entries that canonicalize under /usr, as their canonical path, and drops the rest", () => {
    expect(
      inheritedUsrEntries(
        `${root}/usr-alias:/root/.cargo/bin:relative/bin:/bin:${root}/home/.nvm/bin:/usr/local/bin`,
        hostFs,
      ),
    ).toEqual(["/usr/bin", "/usr/bin", "/usr/local/bin"])
  })
})

describe("trusted roots", () => {
  test("mounted read-only, pathEntries first on PATH, environment relative to the root, toolchain dirs last", () => {
    const chain = resolve(
      [{ root: `${root}/rt`, pathEntries: ["bin"], environment: { RT_HOME: ".", RT_SHARE: "share" } }],
      `${root}/extra/bin`,
    )
    expect(chain.mounts).toEqual([`${root}/rt`, `${root}/extra/bin`])
    expect(chain.path[0]).toBe(`${root}/rt/bin`)
    expect(chain.path.at(-1)).toBe(`${root}/extra/bin`)
    expect(chain.path).toEqual(expect.arrayContaining(DEFAULT_PATH))
    expect(chain.env).toEqual({ RT_HOME: `${root}/rt`, RT_SHARE: `${root}/rt/share` })
  })

  test("a root under HOME that holds no credential store is allowed", () => {
    expect(resolve([{ root: `${root}/home/.nvm`, pathEntries: ["bin"] }]).path[0]).toBe(`${root}/home/.nvm/bin`)
  })

  const refused: [string, () => TrustedRootInput, RegExp][] = [
    ["/", () => ({ root: "/" }), /broad system root/],
    ["/usr", () => ({ root: "/usr" }), /broad system root/],
    ["/etc", () => ({ root: "/etc" }), /broad system root/],
    ["inside /etc", () => ({ root: "/etc/ssl" }), /inside \/etc/],
    ["/proc", () => ({ root: "/proc/self" }), /inside \/proc|broad/],
    ["/opt itself", () => ({ root: "/opt" }), /broad system root/],
    ["HOME", () => ({ root: `${root}/home` }), /HOME itself/],
    ["a credential store", () => ({ root: `${root}/home/.ssh` }), /credential store/],
    [
      "a directory holding OpenCode's config",
      () => ({ root: `${root}/home/.config` }),
      /contains the credential store/,
    ],
    ["a .git directory", () => ({ root: `${root}/repo/.git` }), /Git metadata/],
    ["a bare repository", () => ({ root: `${root}/bare` }), /Git metadata/],
    ["a relative root", () => ({ root: "rt" }), /not an absolute path/],
    ["a pathEntry climbing out", () => ({ root: `${root}/rt`, pathEntries: ["../extra/bin"] }), /inside the root/],
    ["an absolute pathEntry", () => ({ root: `${root}/rt`, pathEntries: ["/usr/bin"] }), /inside the root/],
    ["a pathEntry symlinked out", () => ({ root: `${root}/rt`, pathEntries: ["etc-link"] }), /inside the root/],
    ["a missing pathEntry", () => ({ root: `${root}/rt`, pathEntries: ["nope"] }), /not a directory/],
    ["overriding HOME", () => ({ root: `${root}/rt`, environment: { HOME: "." } }), /not allowed/],
    ["overriding PATH", () => ({ root: `${root}/rt`, environment: { PATH: "bin" } }), /not allowed/],
    ["a malformed variable name", () => ({ root: `${root}/rt`, environment: { "A=B": "." } }), /not allowed/],
    [
      "an environment value climbing out",
      () => ({ root: `${root}/rt`, environment: { X: "../.." } }),
      /inside the root/,
    ],
  ]
  for (const [name, input, message] of refused)
    test(`refuses ${name}`, () => expect(() => resolve([input()])).toThrow(message))

  test("OPENCODE_SANDBOX_TOOLCHAIN_DIRS follows the same rules", () => {
    expect(() => resolve([], `${root}/extra/bin:${root}/home/.ssh`)).toThrow(/credential store/)
    expect(() => resolve([], "/")).toThrow(/broad system root/)
    expect(resolve([], `::${root}/extra/bin:`).mounts).toEqual([`${root}/extra/bin`])
  })
})
