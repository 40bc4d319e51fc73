// Install, reinstall and uninstall act only inside the HOME and XDG dirs they serve. A manifest is
// data that can come from elsewhere (a home copied with `cp -a`, an edit, a restored backup): a path
// it names outside the managed directories is never removed, whatever its hash, and one written for
// another HOME has its paths there re-derived under this one. A garbage manifest is set aside and the
// install proceeds as a first one; an install SIGKILLed mid-apply is repaired by the next. Controls:
// a normal reinstall still replaces and removes stale managed files inside HOME.
import { afterAll, describe, expect, test } from "bun:test"
import { existsSync, lstatSync, readdirSync, readFileSync, watch, writeFileSync } from "node:fs"
import { mkdir, rm, symlink, writeFile } from "node:fs/promises"
import { readFlags } from "../../src/config/flags"
import { clientHomes } from "../../src/install/homes"
import { InstallManifestSchema, sha256, type InstallManifest } from "../../src/install/manifest"
import { adoptManifest, installScope, insideScope } from "../../src/install/scope"
import { uninstall } from "../../src/install/uninstall"
import { run, spawn } from "../../src/util/process"
import { installYes, machine, ROOT, type Machine } from "./helpers"

const manifestOf = (m: Machine) =>
  InstallManifestSchema.parse(JSON.parse(readFileSync(m.paths.installManifest, "utf8")))
const homesOf = (m: Machine) => clientHomes(readFlags(m.env))
const binaryOf = (m: Machine) => `${m.paths.current}/bin/opencode-mcp-orchestrator`
const uninstallIn = (m: Machine, lines: string[] = []) =>
  uninstall({ paths: m.paths, homes: homesOf(m), env: m.env, run, print: (l) => lines.push(l) }, {})

/** Every file of an installation with its hash: what "untouched" is checked against. */
function snapshot(m: Machine): Record<string, string> {
  return Object.fromEntries(
    manifestOf(m).files.map((file) => [file.path, existsSync(file.path) ? sha256(readFileSync(file.path)) : "missing"]),
  )
}

/** A manifest for `m` (as install writes it) with `files` added. */
function plantManifest(m: Machine, files: InstallManifest["files"]) {
  const manifest = manifestOf(m)
  writeFileSync(m.paths.installManifest, JSON.stringify({ ...manifest, files: [...manifest.files, ...files] }))
}
describe("the manifest's paths, judged without the disk", () => {
  const m = machine()
  afterAll(() => m[Symbol.dispose]())
  const scope = installScope(m.paths, homesOf(m))
  const agents = m.paths.opencodeAgentsDir
  test.each([
    ["/etc/passwd", false],
    [`${agents}/../../../../etc/passwd`, false],
    [`${agents}/./opencode-orchestrator-scout.md`, false],
    [`${agents}//opencode-orchestrator-scout.md`, false],
    [`${agents}/my-own-agent.md`, false],
    [`${agents}/sub/opencode-orchestrator-scout.md`, false],
    [`${m.paths.opencodePluginFile}.bak`, false],
    ["relative/x.md", false],
    [agents, false],
    [`${agents}-evil/opencode-orchestrator-scout.md`, false],
    [`${m.home}/.bashrc`, false],
    [`${agents}/opencode-orchestrator-scout.md`, true],
    [`${m.paths.current}/bin/opencode-mcp-orchestrator`, true],
  ])("%s inside the scope: %p", (path, inside) => {
    expect(insideScope(scope, path)).toBe(inside)
  })

  test("a manifest written for another HOME: its paths there re-derived under this one, every other one skipped", () => {
    const other = "/home/original"
    const foreign: InstallManifest = {
      version: 1,
      appVersion: "0.0.1",
      home: other,
      installedAt: new Date().toISOString(),
      integrations: ["codex"],
      registrations: { codex: { configFile: `${other}/.codex/config.toml` } },
      files: [
        {
          path: `${other}${agents.slice(m.home.length)}/opencode-orchestrator-a.md`,
          sha256: "a".repeat(64),
          owner: "opencode",
        },
        { path: "/etc/passwd", sha256: "b".repeat(64), owner: "opencode" },
        { path: `${other}/.bashrc`, sha256: "c".repeat(64), owner: "core" },
      ],
    }
    const { manifest, skipped } = adoptManifest(foreign, scope, homesOf(m))
    expect(manifest?.files.map((f) => f.path)).toEqual([`${agents}/opencode-orchestrator-a.md`])
    expect(manifest?.home).toBe(m.home)
    expect(manifest?.registrations.codex?.configFile).toBe(`${m.home}/.codex/config.toml`)
    expect(skipped.map((s) => s.path)).toEqual(["/etc/passwd", `${other}/.bashrc`])
    // Control: a manifest of this HOME is used as it is.
    const own = { ...foreign, home: m.home, registrations: { codex: { configFile: `${m.home}/.codex/config.toml` } } }
    expect(
      adoptManifest(
        { ...own, files: [{ ...foreign.files[0]!, path: `${agents}/opencode-orchestrator-a.md` }] },
        scope,
        homesOf(m),
      ).skipped,
    ).toEqual([])
  })
})

describe("install in real homes", () => {
  test("install in a copy of a home: the original's binary, agents and plugin are untouched; the copy is installed", async () => {
    using a = machine()
    using b = machine()
    expect((await installYes(a, { integrations: "codex" })).code).toBe(0)
    const original = snapshot(a)
    expect(Object.values(original)).not.toContain("missing")
    await rm(b.home, { recursive: true, force: true })
    expect((await run(["cp", "-a", a.home, b.home])).code).toBe(0)
    // B's copy of A's manifest names A's files; B installs with other choices, so A's paths are not wanted.
    const { code, lines } = await installYes(b, { integrations: "claude" })
    expect(code).toBe(0)
    expect(lines.join("\n")).toContain(`written for HOME ${a.home}`)
    expect(snapshot(a)).toEqual(original)
    const installed = manifestOf(b)
    expect(installed.home).toBe(b.home)
    expect(installed.files.every((file) => file.path.startsWith(`${b.home}/`))).toBe(true)
    for (const file of installed.files) expect(sha256(readFileSync(file.path))).toBe(file.sha256)
    // Control: B's own copy of the codex skill (stale now) was removed, A's was not.
    expect(existsSync(`${b.home}/.agents/skills/orchestrate/SKILL.md`)).toBe(false)
    expect(existsSync(`${a.home}/.agents/skills/orchestrate/SKILL.md`)).toBe(true)
    // Uninstalling in B removes B's files only.
    expect(await uninstallIn(b)).toBe(0)
    expect(existsSync(binaryOf(b))).toBe(false)
    expect(snapshot(a)).toEqual(original)
  }, 300_000)

  test("a manifest naming files outside the managed dirs (absolute, ../, through a symlinked dir, a user's own agent) never has them removed; a FIFO it names does not hang it", async () => {
    using m = machine()
    expect((await installYes(m, { integrations: "codex" })).code).toBe(0)
    const victims = `${m.dir}/victims`
    await mkdir(victims, { recursive: true })
    const victim = (name: string) => {
      const path = `${victims}/${name}`
      writeFileSync(path, `precious ${name}\n`)
      return { path, sha256: sha256(`precious ${name}\n`) }
    }
    const absolute = victim("passwd")
    const dotted = victim("dotted")
    const linked = victim("linked.md")
    await symlink(victims, `${m.paths.dataDir}/linked`)
    const own = `${m.paths.opencodeAgentsDir}/my-agent.md`
    writeFileSync(own, "the user's own agent\n")
    // A FIFO where the manifest records a file of ours: hashed as absent (never read), so left alone.
    const fifo = `${m.paths.dataDir}/stale.bin`
    expect((await run(["mkfifo", fifo])).code).toBe(0)
    const stale = `${m.paths.opencodeAgentsDir}/opencode-orchestrator-retired.md`
    writeFileSync(stale, "retired agent\n")
    plantManifest(m, [
      { path: absolute.path, sha256: absolute.sha256, owner: "opencode" },
      { path: `${m.paths.opencodeAgentsDir}/../../../../victims/dotted`, sha256: dotted.sha256, owner: "opencode" },
      { path: `${m.paths.dataDir}/linked/linked.md`, sha256: linked.sha256, owner: "opencode" },
      { path: own, sha256: sha256("the user's own agent\n"), owner: "opencode" },
      { path: fifo, sha256: "f".repeat(64), owner: "core" },
      // Control: a stale file of ours inside the agents dir, recorded with its hash.
      { path: stale, sha256: sha256("retired agent\n"), owner: "opencode" },
    ])
    const { code, lines } = await installYes(m, { integrations: "codex" })
    expect(code).toBe(0)
    for (const file of [absolute, dotted, linked]) expect(readFileSync(file.path, "utf8")).toContain("precious")
    expect(readFileSync(own, "utf8")).toBe("the user's own agent\n")
    expect(lstatSync(fifo).isFIFO()).toBe(true)
    expect(manifestOf(m).files.some((file) => file.path === fifo)).toBe(false)
    expect(lines.filter((line) => line.startsWith("SKIP "))).toHaveLength(4)
    expect(existsSync(stale)).toBe(false)
    // Uninstall with the same planted entries: still untouched.
    plantManifest(m, [
      { path: absolute.path, sha256: absolute.sha256, owner: "opencode" },
      { path: `${m.paths.dataDir}/linked/linked.md`, sha256: linked.sha256, owner: "opencode" },
    ])
    expect(await uninstallIn(m)).toBe(0)
    for (const file of [absolute, linked]) expect(readFileSync(file.path, "utf8")).toContain("precious")
    expect(existsSync(binaryOf(m))).toBe(false)
  }, 300_000)

  test.each([
    ["not JSON", (file: string) => writeFile(file, "{ half a manifest")],
    ["a directory", (file: string) => mkdir(file)],
    ["a FIFO", async (file: string) => expect((await run(["mkfifo", file])).code).toBe(0)],
  ])(
    "a manifest that is %s is set aside with a message; install proceeds as a first install, removing nothing",
    async (_, plant) => {
      using m = machine()
      expect((await installYes(m, { integrations: "codex" })).code).toBe(0)
      const edited = `${m.home}/.agents/skills/orchestrate/SKILL.md`
      writeFileSync(edited, "my own notes\n")
      await rm(m.paths.installManifest, { recursive: true, force: true })
      await plant(m.paths.installManifest)
      // Uninstall refuses with a fix rather than guess what is ours.
      await expect(uninstallIn(m)).rejects.toThrow(/install-manifest\.json/)
      const { code, lines } = await installYes(m, { integrations: "codex" })
      expect(code).toBe(0)
      expect(lines.join("\n")).toContain("The install manifest could not be read")
      expect(existsSync(`${m.paths.installManifest}.corrupt`)).toBe(true)
      expect(readFileSync(edited, "utf8")).toBe("my own notes\n")
      expect(manifestOf(m).home).toBe(m.home)
      expect(existsSync(binaryOf(m))).toBe(true)
    },
    300_000,
  )

  test("an install SIGKILLed mid-apply (stale files removed, the binary being copied) is repaired by the next install", async () => {
    using m = machine()
    expect((await installYes(m, { integrations: "codex" })).code).toBe(0)
    const skill = `${m.home}/.agents/skills/orchestrate/SKILL.md`
    const bin = `${m.paths.current}/bin`
    // Killed the moment the copy of the binary starts: after the removals, before any other write.
    let proc: ReturnType<typeof spawn> | undefined
    const started = new Promise<void>((resolve) => {
      const watcher = watch(bin, (_, name) => {
        if (!name?.endsWith(".partial") || !proc) return
        process.kill(proc.pid, "SIGKILL")
        watcher.close()
        resolve()
      })
    })
    // A binary other than the installed one (a newer version), so that the install has to copy it.
    const newer = `${m.dir}/newer-binary`
    writeFileSync(newer, Buffer.concat([readFileSync(m.binary), Buffer.from("\n")]), { mode: 0o755 })
    proc = spawn(
      [
        process.execPath,
        `${ROOT}/src/cli/main.ts`,
        "install",
        "--yes",
        "--integrations",
        "none",
        "--binary",
        newer,
        "--no-sandbox-probes",
      ],
      { env: m.env },
    )
    try {
      const ended = proc.exited.then((code) => `the install ended (${code}) before it copied the binary`)
      expect(await Promise.race([started.then(() => "killed"), ended])).toBe("killed")
      expect(await proc.exited).not.toBe(0)
    } finally {
      await proc.kill()
    }
    // The kill landed mid-apply: the stale skill removed, the old manifest still in place.
    expect(existsSync(skill)).toBe(false)
    expect(manifestOf(m).integrations).toEqual(["codex"])
    expect(readdirSync(bin).some((name) => name.includes(".partial"))).toBe(true)
    const { code } = await installYes(m, { integrations: "none" })
    expect(code).toBe(0)
    expect(readdirSync(`${m.paths.current}/bin`)).toEqual(["opencode-mcp-orchestrator"])
    const repaired = manifestOf(m)
    expect(repaired.integrations).toEqual([])
    for (const file of repaired.files) expect(sha256(readFileSync(file.path))).toBe(file.sha256)
    expect(repaired.files.some((file) => file.path === skill)).toBe(false)
  }, 300_000)
})
