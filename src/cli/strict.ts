// Every subcommand's arguments checked against its own citty definitions before it runs: citty
// itself ignores what it does not know, so `doctor --liv` used to skip the live check and pass.
// One check for every command (main.ts calls it), not code in each.
import type { ArgDef, ArgsDef } from "citty"
import { fail } from "../errors"
import { didYouMean } from "../util/suggest"

/** A string option that takes every following word up to the next `--option` (`--models a=x b=y`). */
export type ManyArgDef = ArgDef & { type: "string"; multiple: true }

const isMany = (def: ArgDef): boolean => "multiple" in def && def.multiple === true
const kebab = (name: string) => name.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)
const camel = (name: string) => name.replace(/-([a-z0-9])/g, (_, c: string) => c.toUpperCase())
const clip = (text: string) => JSON.stringify(text.length > 40 ? `${text.slice(0, 40)}…` : text)

interface Option {
  name: string
  def: ArgDef
}

function lookup(defs: ArgsDef, spelled: string): Option | undefined {
  for (const [name, def] of Object.entries(defs)) {
    if (def.type === "positional") continue
    if (name === spelled || kebab(name) === spelled || camel(name) === spelled) return { name, def }
  }
}

function lookupAlias(defs: ArgsDef, letter: string): Option | undefined {
  for (const [name, def] of Object.entries(defs)) {
    if (def.type === "positional" || !("alias" in def) || def.alias === undefined) continue
    if ((Array.isArray(def.alias) ? def.alias : [def.alias]).includes(letter)) return { name, def }
  }
}

/** The spellings a person may mean, for "did you mean": every option, and `no-X` for booleans. */
function spellings(defs: ArgsDef): string[] {
  return Object.entries(defs).flatMap(([name, def]) => {
    if (def.type === "positional") return []
    return def.type === "boolean" ? [kebab(name), `no-${kebab(name)}`] : [kebab(name)]
  })
}

function listing(command: string, defs: ArgsDef): string {
  const names = spellings(defs).filter((name) => !name.startsWith("no-"))
  if (!names.length) return `${command} takes no options.`
  return `Options of ${command}: ${names.map((name) => `--${name}`).join(", ")}.`
}

const capital = (text: string) => `${text[0]!.toUpperCase()}${text.slice(1)}`
const helpFor = (command: string) => `\`opencode-mcp-orchestrator ${command} --help\` describes each.`
const guessFor = (defs: ArgsDef, word: string) => didYouMean(word, spellings(defs), (name) => `--${name}`)

function unknown(command: string, defs: ArgsDef, spelled: string, shown: string) {
  const guess = guessFor(defs, spelled)
  const advice = `${guess ? capital(guess) : listing(command, defs)} ${helpFor(command)}`
  return fail("Usage", `${command} has no option ${clip(shown)}; nothing was done.`, advice)
}

function extra(command: string, defs: ArgsDef, arg: string, positionals: number) {
  const guess = lookup(defs, arg) ? `did you mean --${kebab(arg)}?` : guessFor(defs, arg)
  const plural = positionals > 1 ? "s" : ""
  const what = positionals ? `takes at most ${positionals} argument${plural}` : "takes no arguments"
  const message = `${command} ${what} besides options; ${clip(arg)} is one too many, so nothing was done.`
  return fail("Usage", message, guess ? capital(guess) : listing(command, defs))
}

/** Checks one `--option[=value]` at `rawArgs[i]`; returns how many of the words after it are its value. */
function checkLong(command: string, defs: ArgsDef, rawArgs: readonly string[], i: number): number {
  const arg = rawArgs[i]!
  const eq = arg.indexOf("=")
  const spelled = eq === -1 ? arg.slice(2) : arg.slice(2, eq)
  const option = lookup(defs, spelled)
  if (!option && spelled.startsWith("no-")) {
    const negated = lookup(defs, spelled.slice(3))
    if (negated?.def.type === "boolean" && eq === -1) return 0
    const flag = negated && `--${kebab(negated.name)}`
    const message = `${command}: ${flag} is not a yes/no option, so ${arg} means nothing.`
    if (flag) throw fail("Usage", message, `Pass ${flag} VALUE.`)
  }
  if (!option) throw unknown(command, defs, spelled, arg)
  const flag = `--${kebab(option.name)}`
  if (option.def.type === "boolean") {
    if (eq === -1 || ["true", "false"].includes(arg.slice(eq + 1))) return 0
    const message = `${command}: ${flag} is a yes/no option; ${clip(arg)} gives it a value.`
    throw fail("Usage", message, `Pass ${flag} or --no-${kebab(option.name)}.`)
  }
  if (eq !== -1) return 0
  const next = rawArgs[i + 1]
  const missing = next === undefined || next.startsWith("--")
  if (missing) throw fail("Usage", `${command}: ${flag} needs a value.`, `Pass ${flag} VALUE. ${helpFor(command)}`)
  let taken = 1
  if (isMany(option.def)) while (i + taken + 1 < rawArgs.length && !rawArgs[i + taken + 1]!.startsWith("--")) taken++
  return taken
}

/** Checks `-y` (or `-yq`): each letter must be the alias of a yes/no option. */
function checkShort(command: string, defs: ArgsDef, arg: string) {
  for (const letter of arg.slice(1).split("=")[0]!) {
    const option = lookupAlias(defs, letter)
    if (!option) throw unknown(command, defs, letter, arg)
    const flag = `--${kebab(option.name)}`
    const message = `${command}: write -${letter} as ${flag} VALUE.`
    if (option.def.type !== "boolean") throw fail("Usage", message, `Pass ${flag} VALUE.`)
  }
}

/**
 * Throws a Usage error (exit 2) for the first argument `command` does not define: an unknown
 * `--option` or `-x`, `--no-` on a non-boolean, a value on a boolean other than true/false, an option
 * missing its value, or a positional word beyond the command's positional arguments.
 */
export function checkArgs(command: string, defs: ArgsDef, rawArgs: readonly string[]): void {
  const positionals = Object.values(defs).filter((def) => def.type === "positional").length
  let words = 0
  for (let i = 0; i < rawArgs.length; i++) {
    const arg = rawArgs[i]!
    if (arg === "--") {
      // Everything after it is a positional word, whatever it looks like.
      for (const word of rawArgs.slice(i + 1)) if (++words > positionals) throw extra(command, defs, word, positionals)
      return
    }
    if (arg.startsWith("--")) i += checkLong(command, defs, rawArgs, i)
    else if (arg.startsWith("-") && arg.length > 1 && !/^-\d/.test(arg)) checkShort(command, defs, arg)
    else if (++words > positionals) throw extra(command, defs, arg, positionals)
  }
}
