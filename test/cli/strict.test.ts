// The argument check every subcommand goes through (src/cli/strict.ts, run.ts): a table of what it
// accepts and refuses, and, in-process with planted commands, that a command added later is covered
// without code of its own, while citty alone (the path before the check) runs it anyway.
import { describe, expect, test } from "bun:test"
import { type CommandDef, defineCommand, runCommand } from "citty"
import { AppError } from "../../src/errors"
import { type CliIO, runCli, subcommands } from "../../src/cli/run"
import { checkArgs } from "../../src/cli/strict"
import { colorAllowed } from "../../src/config/flags"
import { nearest } from "../../src/util/suggest"

const DEFS = {
  yes: { type: "boolean", alias: "y", default: false },
  models: { type: "string", multiple: true },
  steps: { type: "string" },
  integrations: { type: "string" },
  "dry-run": { type: "boolean", default: false },
  "sandbox-probes": { type: "boolean", default: true },
} as const

const refusal = (args: string[]) => {
  try {
    checkArgs("install", DEFS, args)
    return undefined
  } catch (error) {
    expect(error).toBeInstanceOf(AppError)
    const e = error as AppError
    expect(e.kind).toBe("Usage")
    return `${e.message}\n${e.hint}`
  }
}

describe("checkArgs", () => {
  const accepted: string[][] = [
    [],
    ["--yes", "--dry-run"],
    ["-y", "--steps", "extended"],
    ["--steps=extended", "--models", "scout=a/b", "worker=c/d", "runner=e/f", "--yes"],
    ["--no-sandbox-probes", "--dryRun", "--yes=false"],
    ["--steps", "-1"],
    ["--yes", "--"],
  ]
  for (const args of accepted) test(`accepts ${JSON.stringify(args)}`, () => expect(refusal(args)).toBeUndefined())

  const refused: [string[], RegExp][] = [
    [["--yes", "--integration", "codex"], /no option "--integration"[\s\S]*Did you mean --integrations\?/i],
    [["--mdoels", "a/b"], /Did you mean --models\?/],
    [["--dryrun"], /Did you mean --dry-run\?/],
    [["--no-sandbox-probe"], /Did you mean --no-sandbox-probes\?/],
    [["--frobnicate"], /Options of install: --yes, --models, --steps, --integrations, --dry-run, --sandbox-probes\./],
    [["-x"], /no option "-x"/],
    [["--no-steps"], /--steps is not a yes\/no option/],
    [["--yes=maybe"], /--yes is a yes\/no option/],
    [["--steps"], /--steps needs a value/],
    [["--steps", "--yes"], /--steps needs a value/],
    [["stray"], /takes no arguments besides options; "stray" is one too many/],
    [["yes"], /Did you mean --yes\?/],
    [["--", "stray"], /"stray" is one too many/],
  ]
  for (const [args, pattern] of refused)
    test(`refuses ${JSON.stringify(args)}`, () => expect(refusal(args)).toMatch(pattern))

  test("a positional argument the command defines is accepted, one more is not", () => {
    const defs = { filter: { type: "positional", required: false }, json: { type: "boolean" } } as const
    expect(() => checkArgs("models", defs, ["gpt", "--json"])).not.toThrow()
    expect(() => checkArgs("models", defs, ["gpt", "extra"])).toThrow(/at most 1 argument/)
  })
})

describe("nearest", () => {
  const table: [string, string[], string[]][] = [
    ["liv", ["sandbox-probes", "live", "json"], ["live"]],
    ["purge", ["purge-config", "dry-run"], ["purge-config"]],
    ["timeout", ["timeouts", "steps"], ["timeouts"]],
    ["jsno", ["json", "limit"], ["json"]],
    ["sta", ["state", "stale-seconds", "since"], ["state"]],
    ["model", ["models", "modelVariants"], ["models"]],
    ["dryrun", ["dry-run", "json"], ["dry-run"]],
    ["frobnicate", ["json", "limit"], []],
    ["x", ["json"], []],
  ]
  for (const [word, candidates, expected] of table)
    test(`${word} → ${expected.join(", ") || "nothing"}`, () => expect(nearest(word, candidates)).toEqual(expected))
})

test("colour only on a terminal, and never with NO_COLOR or TERM=dumb", () => {
  expect(colorAllowed({}, true)).toBe(true)
  expect(colorAllowed({}, false)).toBe(false)
  expect(colorAllowed({ NO_COLOR: "1" }, true)).toBe(false)
  expect(colorAllowed({ NO_COLOR: "yes" }, true)).toBe(false)
  expect(colorAllowed({ TERM: "dumb" }, true)).toBe(false)
})

// A root with one planted command, as a command added later would be: it declares `--live` and
// records whether it ran.
function planted() {
  const state = { ran: false }
  const command = defineCommand({
    meta: { name: "planted", description: "A command added later." },
    args: { live: { type: "boolean", default: false, description: "Do it for real." } },
    run() {
      state.ran = true
    },
  })
  const root = defineCommand({ meta: { name: "root" }, subCommands: { planted: () => Promise.resolve(command) } })
  return { root, state }
}

function capture(): CliIO & { stdout: string[]; stderr: string[] } {
  const stdout: string[] = []
  const stderr: string[] = []
  return { stdout, stderr, out: (t) => stdout.push(t), err: (t) => stderr.push(t), color: false, version: "0.0.0" }
}

/** What every subcommand must do with an unknown flag: refuse with exit 2 and advice, before running. */
function expectRefusedBeforeRunning(outcome: { code: number; ran: boolean; stderr: string }) {
  expect(outcome.ran).toBe(false)
  expect(outcome.code).toBe(2)
  expect(outcome.stderr).toContain("Did you mean --live?")
  expect(outcome.stderr).not.toMatch(/\n\s+at /)
}

describe("a command added later", () => {
  test("is refused an unknown flag with exit 2 and a did-you-mean line, and does not run", async () => {
    const { root, state } = planted()
    const io = capture()
    const code = await runCli(root as CommandDef, ["planted", "--liv"], io)
    expectRefusedBeforeRunning({ code, ran: state.ran, stderr: io.stderr.join("\n") })
  })

  test("control: its valid flag runs it", async () => {
    const { root, state } = planted()
    const io = capture()
    expect(await runCli(root as CommandDef, ["planted", "--live"], io)).toBe(0)
    expect(state.ran).toBe(true)
  })

  test("control: through citty alone (no check) the same call runs, so the assertion above can fail", async () => {
    const { root, state } = planted()
    let code = 0
    let stderr = ""
    try {
      await runCommand(root, { rawArgs: ["planted", "--liv"] })
    } catch (error) {
      code = 2
      stderr = String(error)
    }
    expect(() => expectRefusedBeforeRunning({ code, ran: state.ran, stderr })).toThrow()
    expect(state.ran).toBe(true)
  })

  test("a mistyped command, or an option before the command, is refused with exit 2 and runs nothing", async () => {
    const { root, state } = planted()
    for (const [argv, advice] of [
      [["plante", "--live"], "Did you mean planted?"],
      [["--live", "planted"], "options go after the command"],
    ] as const) {
      const io = capture()
      expect(await runCli(root as CommandDef, [...argv], io)).toBe(2)
      expect(io.stderr.join("\n")).toContain(advice)
    }
    expect(state.ran).toBe(false)
  })

  test("--help prints its usage without running it or any colour code", async () => {
    const { root, state } = planted()
    const io = capture()
    expect(await runCli(root as CommandDef, ["planted", "--help"], io)).toBe(0)
    expect(state.ran).toBe(false)
    expect(io.stdout.join("\n")).toContain("--live")
    expect(io.stdout.join("\n")).not.toContain("\u001b[")
  })
})

describe("loading", () => {
  /** Two lazy commands that note when they are loaded. */
  function two() {
    const loaded: string[] = []
    const lazy = (name: string) => () => {
      loaded.push(name)
      return Promise.resolve(defineCommand({ meta: { name }, run() {} }))
    }
    const root = defineCommand({
      meta: { name: "root" },
      subCommands: { serve: lazy("serve"), install: lazy("install") },
    })
    return { root, loaded }
  }

  test("only the command that runs is loaded (serve starts without the installer's code)", async () => {
    const { root, loaded } = two()
    expect(await runCli(root as CommandDef, ["serve"], capture())).toBe(0)
    // Asked for twice (the check, then citty), the same module: none other.
    expect(new Set(loaded)).toEqual(new Set(["serve"]))
  })

  test("a mistyped command loads none, and is still told the names", async () => {
    const { root, loaded } = two()
    const io = capture()
    expect(await runCli(root as CommandDef, ["serv"], io)).toBe(2)
    expect(io.stderr.join("\n")).toContain("Commands: serve, install.")
    expect(loaded).toEqual([])
  })

  test("control: resolving the subcommands, as the check did before, loads every one", async () => {
    const { root, loaded } = two()
    await subcommands(root as CommandDef)
    expect(loaded).toEqual(["serve", "install"])
  })
})
