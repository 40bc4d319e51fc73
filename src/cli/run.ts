// The CLI's one way in: picks the subcommand, answers --help and --version, and refuses arguments the
// subcommand does not define (strict.ts) before citty runs it. `runCli` takes the root command so a
// test drives it with planted commands; main.ts passes the real one.
import { type CommandDef, type Resolvable, type SubCommandsDef, renderUsage, runCommand } from "citty"
import { describe, fail } from "../errors"
import { didYouMean } from "../util/suggest"
import { exitCodeOf } from "./exit"
import { checkArgs } from "./strict"

export interface CliIO {
  out(text: string): void
  err(text: string): void
  /** Whether stdout may carry ANSI colour (config/flags.ts colorAllowed). */
  color: boolean
  version: string
}

// biome-ignore lint/suspicious/noControlCharactersInRegex: the escape character is what is matched
const ANSI = /\u001b\[[0-9;]*m/g
export const plain = (text: string) => text.replace(ANSI, "")

const HELP = new Set(["--help", "-h"])

const resolved = async <T>(value: Resolvable<T>): Promise<T> =>
  typeof value === "function" ? (value as () => T | Promise<T>)() : value

/** The subcommands of `root` by name, each still as declared: a lazy one is loaded only when it runs. */
async function declared(root: CommandDef): Promise<SubCommandsDef> {
  return root.subCommands ? resolved(root.subCommands) : {}
}

/** The subcommands of `root`, every one loaded (citty allows lazy ones), by name. */
export async function subcommands(root: CommandDef): Promise<Map<string, CommandDef>> {
  const out = new Map<string, CommandDef>()
  for (const [name, value] of Object.entries(await declared(root))) out.set(name, await resolved(value))
  return out
}

async function usage(command: CommandDef, io: CliIO, parent?: CommandDef) {
  // citty pads the option columns; the padding at the end of a line is noise in a pipe or a file.
  const text = (await renderUsage(command, parent)).replace(/ +$/gm, "")
  io.out(io.color ? text : plain(text))
}

function unknownCommand(first: string, names: string[]) {
  const listed = `Commands: ${names.join(", ")}.`
  const misplaced = `${plain(first)} is not an option here: options go after the command.`
  if (first.startsWith("-")) return fail("Usage", misplaced, listed)
  const guess = didYouMean(first, names)
  const advice = guess ? `${guess[0]!.toUpperCase()}${guess.slice(1)} ${listed}` : listed
  return fail("Usage", `there is no command ${JSON.stringify(first.slice(0, 40))}; nothing was done.`, advice)
}

/** Runs argv (without the program name) and returns the exit code; prints errors, never stacks. */
export async function runCli(root: CommandDef, argv: string[], io: CliIO): Promise<number> {
  try {
    const first = argv[0]
    if (first === "--version" || first === "-v") {
      io.out(io.version)
      return 0
    }
    if (first === undefined || HELP.has(first)) {
      await usage(root, io)
      return 0
    }
    // Only the command that runs is loaded: `serve` starts without the installer's or doctor's code.
    const commands = await declared(root)
    if (!Object.hasOwn(commands, first)) throw unknownCommand(first, Object.keys(commands))
    const command = await resolved(commands[first]!)
    const rest = argv.slice(1)
    const end = rest.indexOf("--")
    if ((end === -1 ? rest : rest.slice(0, end)).some((arg) => HELP.has(arg))) {
      await usage(command, io, root)
      return 0
    }
    const args = typeof command.args === "function" ? await command.args() : await command.args
    checkArgs(first, args ?? {}, rest)
    process.exitCode = undefined
    await runCommand(root, { rawArgs: argv })
    return typeof process.exitCode === "number" ? process.exitCode : 0
  } catch (error) {
    io.err(`error: ${plain(describe(error))}`)
    return exitCodeOf(error)
  }
}
