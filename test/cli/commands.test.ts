// Every registered subcommand, run as a process from source in an empty HOME, refuses an unknown
// flag and a stray word with exit 2 and a did-you-mean (or the list of its options), prints no stack
// trace and writes nothing. The table is built from main.ts's subcommands, so a command added there
// is covered without touching this file. Controls: the commands' valid flags still work.
import { describe, expect, test } from "bun:test"
import { existsSync, readdirSync } from "node:fs"
import { resolve } from "node:path"
import type { ArgsDef } from "citty"
import { main } from "../../src/cli/main"
import { subcommands } from "../../src/cli/run"
import { run } from "../../src/util/process"
import { tempDir } from "../helpers/temp"
import { homeEnv, machine } from "../install/helpers"

const MAIN = resolve(import.meta.dir, "../../src/cli/main.ts")

/** Runs the CLI from source with HOME and every XDG dir inside `home`; Bun keeps no cache there. */
const cli = (home: string, args: string[], extra: Record<string, string> = {}) =>
  run([process.execPath, MAIN, ...args], {
    env: {
      ...homeEnv(home),
      BUN_RUNTIME_TRANSPILER_CACHE_PATH: "0",
      ...extra,
    },
    timeoutMs: 60_000,
  })

const written = (home: string) => readdirSync(home, { recursive: true })

interface Case {
  command: string
  args: string[]
  advice: string
}

/** For each subcommand: its first option cut short, an option nobody has, and a stray word. */
async function table(): Promise<Case[]> {
  const cases: Case[] = []
  for (const [command, def] of await subcommands(main)) {
    const defs = ((typeof def.args === "function" ? await def.args() : await def.args) ?? {}) as ArgsDef
    const options = Object.entries(defs)
      .filter(([, d]) => d.type !== "positional")
      .map(([name]) => name)
    const listing = options.length
      ? `Options of ${command}: ${options.map((name) => `--${name}`).join(", ")}.`
      : `${command} takes no options.`
    const first = options[0]
    if (first) cases.push({ command, args: [`--${first.slice(0, -1)}`], advice: `Did you mean --${first}` })
    cases.push({ command, args: ["--zzz-not-an-option"], advice: listing })
    const positionals = Object.values(defs).filter((d) => d.type === "positional").length
    cases.push({
      command,
      args: Array.from({ length: positionals + 1 }, (_, i) => `stray${i}`),
      advice: "is one too many",
    })
  }
  return cases
}

const cases = await table()

test("the table holds every registered subcommand, the ones the issue names among them", async () => {
  const commands = new Set(cases.map((c) => c.command))
  expect(commands.size).toBe((await subcommands(main)).size)
  for (const name of ["install", "doctor", "uninstall", "serve", "models", "tasks", "stats", "sessions"])
    expect(commands).toContain(name)
})

describe("an argument the subcommand does not define", () => {
  for (const { command, args, advice } of cases) {
    test(`${command} ${args.join(" ")}: exit 2, "${advice}", no stack trace, nothing written`, async () => {
      await using home = await tempDir("cli-strict-")
      const outcome = await cli(home.path, [command, ...args])
      expect(outcome.stderr).toContain(advice)
      expect(outcome.stderr).toContain("nothing was done")
      expect(outcome.stderr).not.toMatch(/\n\s+at /)
      expect(outcome.code).toBe(2)
      expect(written(home.path)).toEqual([])
    })
  }

  test("the issue's own cases: each names the option meant", async () => {
    await using home = await tempDir("cli-strict-")
    const seen: [string[], string][] = [
      [["install", "--yes", "--integration", "codex"], "Did you mean --integrations?"],
      [["doctor", "--liv"], "Did you mean --live?"],
      [["uninstall", "--purge"], "Did you mean --purge-config?"],
      [["install", "--dry-run", "--model", "scout=x", "--timeout", "extended"], "Did you mean --models?"],
    ]
    for (const [args, advice] of seen) {
      const outcome = await cli(home.path, args)
      expect([outcome.code, outcome.stderr]).toEqual([2, expect.stringContaining(advice)])
    }
    expect(written(home.path)).toEqual([])
  })
})

describe("controls: valid arguments still work", () => {
  test("stats --json and tasks --json print JSON", async () => {
    await using home = await tempDir("cli-strict-")
    for (const command of ["stats", "tasks"]) {
      const outcome = await cli(home.path, [command, "--json"])
      expect(outcome.code).toBe(0)
      expect(() => JSON.parse(outcome.stdout)).not.toThrow()
    }
  })

  test("doctor --json --no-sandbox-probes reports (unhealthy: nothing is installed)", async () => {
    await using home = await tempDir("cli-strict-")
    const outcome = await cli(home.path, ["doctor", "--json", "--no-sandbox-probes"])
    expect(JSON.parse(outcome.stdout)).toMatchObject({ verdict: "DOCTOR_UNHEALTHY" })
    expect(outcome.code).toBe(1)
  })

  test("install --yes --dry-run --models with space-separated roles plans and changes nothing", async () => {
    // A home with an OpenCode config whose offline provider has the models named here.
    using m = machine()
    const args = [
      "install",
      "--yes",
      "--dry-run",
      "--models",
      "scout=local/m",
      "worker=local/n",
      "--integrations",
      "none",
      "--binary",
      m.binary,
    ]
    const outcome = await run([process.execPath, MAIN, ...args], { env: m.env, timeoutMs: 120_000 })
    expect(outcome.stderr).toBe("")
    expect(outcome.stdout).toContain("Dry run: nothing was changed.")
    expect(outcome.code).toBe(0)
    expect(existsSync(m.paths.dataDir)).toBe(false)
  }, 120_000)
})

describe("--help", () => {
  test("root and subcommand usage into a pipe carry no colour codes and run nothing", async () => {
    await using home = await tempDir("cli-strict-")
    for (const args of [["--help"], ["install", "--help"], ["doctor", "-h"]]) {
      const outcome = await cli(home.path, args)
      expect(outcome.code).toBe(0)
      expect(outcome.stdout).toContain("USAGE")
      expect(outcome.stdout).not.toContain("\u001b[")
    }
    expect(written(home.path)).toEqual([])
  })

  // util-linux `script` gives the command a terminal: colour there is the control that shows the
  // pipe case above could fail, and NO_COLOR must remove it even on a terminal.
  test("on a terminal usage is coloured (control), and NO_COLOR removes it", async () => {
    await using home = await tempDir("cli-strict-")
    const command = `${process.execPath} ${MAIN} doctor --help`
    const env = { HOME: home.path, PATH: "/usr/bin:/bin", TERM: "xterm", BUN_RUNTIME_TRANSPILER_CACHE_PATH: "0" }
    const onTerminal = (extra: Record<string, string>) =>
      run(["script", "-qec", command, "/dev/null"], { env: { ...env, ...extra }, timeoutMs: 60_000 })
    const coloured = await onTerminal({})
    expect(coloured.code).toBe(0)
    expect(coloured.stdout).toContain("\u001b[")
    // Any value counts (no-color.org); citty alone honours only "1".
    const plain = await onTerminal({ NO_COLOR: "true" })
    expect(plain.stdout).toContain("USAGE")
    expect(plain.stdout).not.toContain("\u001b[")
  })
})
