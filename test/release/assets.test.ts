// The pure parts of a release: argument checks, names, SHA256SUMS text, install.sh rendering.
import { describe, expect, test } from "bun:test"
import {
  INSTALL_TEMPLATE,
  archiveName,
  checkRepository,
  checkVersion,
  formatChecksums,
  releaseBase,
  renderInstallScript,
  sbomName,
  stemOf,
} from "../../scripts/release/assets"
import { run } from "../../src/util/process"

describe("checkVersion", () => {
  test.each(["0.1.0", "1.2.3", "10.0.0-rc.1", "1.0.0+build.5"])("accepts %s", (version) => {
    expect(checkVersion(version)).toBe(version)
  })
  test.each(["", "v0.1.0", "0.1", "01.2.3", "1.2.3; rm -rf /", "1.2.3/../x", "1.2.3 "])("refuses %j", (version) => {
    expect(() => checkVersion(version)).toThrow()
  })
})

describe("checkRepository", () => {
  test.each(["acme/orch", "Mesya82/opencode-mcp-orchestrator", "a-b/c.d_e"])("accepts %s", (repository) => {
    expect(checkRepository(repository)).toBe(repository)
  })
  test.each([
    undefined,
    "acme",
    "acme/orch/x",
    "-acme/orch",
    "acme/..",
    "acme/$(id)",
    "acme/orch'",
    "https://github.com/a/b",
  ])("refuses %j", (repository) => {
    expect(() => checkRepository(repository)).toThrow()
  })
})

test("asset names follow the versioned layout, one archive per architecture", () => {
  expect(stemOf("0.1.0", "x64")).toBe("opencode-mcp-orchestrator-0.1.0-linux-x64")
  expect(archiveName("0.1.0", "arm64")).toBe("opencode-mcp-orchestrator-0.1.0-linux-arm64.tar.gz")
  expect(sbomName("0.1.0")).toBe("opencode-mcp-orchestrator-0.1.0.cdx.json")
  expect(releaseBase("acme/orch", "0.1.0")).toBe("https://github.com/acme/orch/releases/download/v0.1.0")
})

describe("formatChecksums", () => {
  const hash = (c: string) => c.repeat(64)
  test("sha256sum format, sorted by name", () => {
    expect(
      formatChecksums([
        { name: "b.tar.gz", sha256: hash("b") },
        { name: "a.json", sha256: hash("a") },
        { name: "A", sha256: hash("c") },
      ]),
    ).toBe(`${hash("c")}  A\n${hash("a")}  a.json\n${hash("b")}  b.tar.gz\n`)
  })
  test.each([
    { name: "x", sha256: "ABC" },
    { name: "x", sha256: hash("A") },
    { name: "a b", sha256: hash("a") },
    { name: "dir/x", sha256: hash("a") },
  ])("refuses %j", (entry) => {
    expect(() => formatChecksums([entry])).toThrow()
  })
})

describe("renderInstallScript", () => {
  test("fills every placeholder and refuses unknown ones", () => {
    expect(renderInstallScript("@@VERSION@@ @@REPOSITORY@@ @@RELEASE_BASE@@", "acme/orch", "1.2.3")).toBe(
      "1.2.3 acme/orch https://github.com/acme/orch/releases/download/v1.2.3",
    )
    expect(() => renderInstallScript("@@NOPE@@", "acme/orch", "1.2.3")).toThrow(/unknown placeholder/)
    expect(() => renderInstallScript("x", "acme/$(id)", "1.2.3")).toThrow()
  })

  test("the real template renders to POSIX sh that dash parses, with the download base baked in", async () => {
    const script = renderInstallScript(await Bun.file(INSTALL_TEMPLATE).text(), "acme/orch", "0.2.0")
    expect(script).not.toContain("@@")
    expect(script).toContain(
      `BASE="\${OPENCODE_MCP_ORCHESTRATOR_RELEASE_BASE:-https://github.com/acme/orch/releases/download/v0.2.0}"`,
    )
    expect(script).toContain("VERSION='0.2.0'")
    expect(script.startsWith("#!/bin/sh\n")).toBe(true)
    const parsed = await run(["dash", "-n"], { stdin: script })
    expect(parsed.stderr).toBe("")
    expect(parsed.code).toBe(0)
  })

  test("the template uses no bash-only syntax", async () => {
    const template = await Bun.file(INSTALL_TEMPLATE).text()
    // (`function` is left out: the embedded awk programs use it legitimately.)
    const bashisms = ["[[", "local ", "$'", "<<<", "pipefail", "${BASH", "source ", "echo -e"]
    expect(bashisms.filter((bashism) => template.includes(bashism))).toEqual([])
  })
})
