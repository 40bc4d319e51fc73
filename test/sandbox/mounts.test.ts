// The host-side mount check, table-driven on a real temporary tree, and the GHSA-pxhw-h44j-8pfx
// symlink-parent pattern: refused by checkMounts before bwrap starts, whatever bwrap's version. The
// control runs the same mounts on Debian's bwrap 0.8.0 (kept as /usr/bin/bwrap.debian by
// scripts/install-bwrap.sh) and shows the escape is real there.
import { afterAll, beforeAll, describe, expect, test } from "bun:test"
import { existsSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs"
import { AppError } from "../../src/errors"
import { mountArgs } from "../../src/sandbox/argv"
import { hostFs } from "../../src/sandbox/fs-view"
import { checkMounts, type Mount } from "../../src/sandbox/mounts"
import { systemMounts } from "../../src/sandbox/system-mounts"
import { run } from "../../src/util/process"
import { requireInstalled } from "../helpers/installed"

let root = ""
beforeAll(() => {
  root = mkdtempSync("/tmp/orch-mounts-test-")
  mkdirSync(`${root}/ws/sub`, { recursive: true })
  mkdirSync(`${root}/target`)
  writeFileSync(`${root}/file`, "x")
  writeFileSync(`${root}/ws/plain`, "x")
  // The GHSA shape: an absolute symlink that means the host's root when bwrap resolves it in its staging root.
  symlinkSync(`/oldroot${root}/target`, `${root}/ws/link`)
  symlinkSync(`${root}/target`, `${root}/ws/abs-link`)
  symlinkSync("sub", `${root}/ws/rel-link`)
  symlinkSync(`${root}/ws`, `${root}/ws-alias`)
})
afterAll(() => rmSync(root, { recursive: true, force: true }))

const base = (): Mount[] => [
  { op: "tmpfs", dest: "/tmp" },
  { op: "bind", source: `${root}/ws`, dest: `${root}/ws` },
]
const refused = (mounts: Mount[]) => {
  try {
    checkMounts(mounts, hostFs)
  } catch (error) {
    expect(error).toBeInstanceOf(AppError)
    return (error as AppError).message
  }
  return undefined
}

describe("checkMounts", () => {
  const cases: [string, () => Mount, RegExp | undefined][] = [
    [
      "a file onto an existing file in the workspace",
      () => ({ op: "ro-bind", source: `${root}/file`, dest: `${root}/ws/plain` }),
      undefined,
    ],
    [
      "a directory onto an existing directory",
      () => ({ op: "ro-bind", source: `${root}/target`, dest: `${root}/ws/sub` }),
      undefined,
    ],
    [
      "the GHSA pattern: destination parent is a /oldroot symlink",
      () => ({ op: "ro-bind", source: `${root}/file`, dest: `${root}/ws/link/created` }),
      /ws\/link on the host is a symlink/,
    ],
    [
      "destination parent is an absolute symlink",
      () => ({ op: "ro-bind", source: `${root}/file`, dest: `${root}/ws/abs-link/created` }),
      /symlink/,
    ],
    [
      "destination parent is a relative symlink",
      () => ({ op: "ro-bind", source: `${root}/file`, dest: `${root}/ws/rel-link/x` }),
      /symlink/,
    ],
    [
      "destination itself is a symlink",
      () => ({ op: "ro-bind", source: `${root}/target`, dest: `${root}/ws/abs-link` }),
      /symlink/,
    ],
    [
      "destination would be created on the host",
      () => ({ op: "ro-bind", source: `${root}/file`, dest: `${root}/ws/new-file` }),
      /does not exist on the host/,
    ],
    [
      "destination has a .. component",
      () => ({ op: "ro-bind", source: `${root}/file`, dest: `${root}/ws/../file` }),
      /not a normal absolute path/,
    ],
    ["destination is relative", () => ({ op: "tmpfs", dest: "tmp/x" }), /not a normal absolute path/],
    [
      "source goes through a symlink",
      () => ({ op: "ro-bind", source: `${root}/ws-alias/plain`, dest: `${root}/ws/plain` }),
      /not a canonical path/,
    ],
    ["destination under a sandbox symlink", () => ({ op: "tmpfs", dest: "/tmp/lnk/x" }), /symlink in the sandbox/],
  ]
  for (const [name, mount, expected] of cases)
    test(`${name}: ${expected ? "refused" : "allowed"}`, () => {
      const mounts = [...base(), { op: "symlink", target: "usr/bin", dest: "/tmp/lnk" } as Mount, mount()]
      const message = refused(mounts)
      if (expected) expect(message).toMatch(expected)
      else expect(message).toBeUndefined()
    })

  test("the standard system layout passes", () => {
    expect(refused([...systemMounts(hostFs), ...base()])).toBeUndefined()
  })
})

describe("GHSA-pxhw-h44j-8pfx on the real binaries", () => {
  const ghsa = (): Mount[] => [
    ...systemMounts(hostFs),
    { op: "proc", dest: "/proc" },
    { op: "dev", dest: "/dev" },
    ...base(),
    { op: "ro-bind", source: `${root}/file`, dest: `${root}/ws/link/created` },
  ]
  const argv = (bwrap: string) => [
    bwrap,
    "--unshare-all",
    "--die-with-parent",
    ...ghsa().flatMap(mountArgs),
    "/bin/true",
  ]

  test("checkMounts refuses it before any bwrap runs", () => {
    expect(refused(ghsa())).toMatch(/is a symlink/)
  })

  const old = "/usr/bin/bwrap.debian"
  test("control: Debian's bwrap 0.8.0 creates a file on the host when not stopped first", async () => {
    requireInstalled(old, "Debian's bubblewrap 0.8.0, the control")
    rmSync(`${root}/target/created`, { force: true })
    await run(argv(old), { env: {}, timeoutMs: 10_000 })
    expect(existsSync(`${root}/target/created`)).toBe(true)
    rmSync(`${root}/target/created`, { force: true })
  })

  test("/usr/bin/bwrap (>= 0.12) refuses it as well", async () => {
    const result = await run(argv("/usr/bin/bwrap"), { env: {}, timeoutMs: 10_000 })
    expect(result.code).not.toBe(0)
    expect(existsSync(`${root}/target/created`)).toBe(false)
  })
})
