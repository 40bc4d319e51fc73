// The installer's choices as data, from flags (`--yes`, scripts, CI) or from the wizard, and the
// config.json they produce. Everything the user has not chosen again is kept from the existing config.
import { parseConfig } from "../config/load"
import { ROLES, roleModels, type Config, type Role } from "../config/schema"
import { fail } from "../errors"
import type { CatalogModel } from "../opencode/catalog"
import { INTEGRATIONS, type Integration } from "./plan"

export type PerRole = Partial<Record<Role, string>>
export type StepChoice = NonNullable<Config["stepLimits"]>
export type TimeoutChoice = NonNullable<Config["timeoutLimits"]>

/** A role's model, or (kept from config.json: the installer does not edit lists) its ordered list. */
export type RoleModels = Config["models"]

export interface Choices {
  models: RoleModels
  variants: PerRole
  stepLimits: StepChoice
  timeoutLimits: TimeoutChoice
  integrations: Integration[]
  /** Asked by the wizard when Codex is chosen: run our tools there without a prompt per call. */
  codexApprove?: boolean
}

export interface FlagValues {
  models?: string
  variants?: string
  steps?: string
  timeouts?: string
  integrations?: string
}

const usage = (message: string, hint: string) => fail("Usage", message, hint)

/** `scout=a/b,worker=c/d` or `a/b` for every role. */
export function parseRoleList(flag: string, raw: string): PerRole {
  const out: PerRole = {}
  for (const part of raw.split(/[,\s]+/).filter(Boolean)) {
    const [role, value, ...rest] = part.split("=")
    if (value === undefined) {
      for (const r of ROLES) out[r] = role
      continue
    }
    if (!ROLES.includes(role as Role) || !value || rest.length)
      throw usage(
        `--${flag} ${JSON.stringify(part)} is not role=value.`,
        `Write --${flag} scout=VALUE,worker=VALUE,runner=VALUE (roles: ${ROLES.join(", ")}).`,
      )
    out[role as Role] = value
  }
  return out
}

function numbers(flag: string, raw: string, count: number): number[] {
  const values = raw.split(",").map((v) => Number(v.trim()))
  if (values.length !== count || values.some((v) => !Number.isInteger(v)))
    throw usage(
      `--${flag} custom:${raw} needs ${count} whole numbers.`,
      `Write --${flag} custom:${count === 3 ? "SCOUT,WORKER,RUNNER" : "SCOUT,WORKER,RUNNER,PARENT"}.`,
    )
  return values
}

export function parseSteps(raw: string): StepChoice {
  if (raw === "standard" || raw === "extended") return { profile: raw }
  if (raw.startsWith("custom:")) {
    const [scout, worker, runner] = numbers("steps", raw.slice(7), 3) as [number, number, number]
    return { profile: "custom", scout, worker, runner }
  }
  throw usage(
    `--steps ${JSON.stringify(raw)} is not a step profile.`,
    "Use --steps standard, extended or custom:SCOUT,WORKER,RUNNER (4 to 256 each).",
  )
}

export function parseTimeouts(raw: string): TimeoutChoice {
  if (raw === "standard" || raw === "extended") return { profile: raw }
  if (raw.startsWith("custom:")) {
    const [scout, worker, runner, parent] = numbers("timeouts", raw.slice(7), 4) as [number, number, number, number]
    return { profile: "custom", scout, worker, runner, parent }
  }
  throw usage(
    `--timeouts ${JSON.stringify(raw)} is not a timeout profile.`,
    "Use --timeouts standard, extended or custom:SCOUT,WORKER,RUNNER,PARENT (seconds; parent at least 60 more than " +
      "each role).",
  )
}

function parseIntegrations(raw: string): Integration[] {
  const names = raw
    .split(",")
    .map((v) => v.trim())
    .filter((v) => v && v !== "none")
  for (const name of names)
    if (!INTEGRATIONS.includes(name as Integration))
      throw usage(`--integrations: unknown client "${name}".`, "Use --integrations codex,claude (or none).")
  return INTEGRATIONS.filter((name) => names.includes(name))
}

/** Checks each chosen model and variant against what OpenCode lists. */
export function checkModels(choices: Pick<Choices, "models" | "variants">, catalog: CatalogModel[]): void {
  for (const role of ROLES) {
    const ids = roleModels(choices, role)
    const variant = choices.variants[role]
    if (ids.length === 0) {
      if (variant)
        throw usage(
          `A variant for ${role} needs a model for ${role}.`,
          `Give --models ${role}=PROVIDER/MODEL too, or drop the variant.`,
        )
      continue
    }
    // Every model of a list must be offered; a variant belongs to the first.
    for (const id of ids.slice(1)) if (!catalog.some((m) => m.id === id)) missing(role, id, catalog)
    const id = ids[0]!
    const model = catalog.find((m) => m.id === id)
    if (!model) missing(role, id, catalog)
    if (variant && !model.variants.includes(variant))
      throw usage(
        `Model ${id} has no variant "${variant}" (for ${role}).`,
        model.variants.length
          ? `Its variants: ${model.variants.join(", ")}, or default.`
          : `${id} has no variants; use default.`,
      )
  }
}

function missing(role: Role, id: string, catalog: CatalogModel[]): never {
  const near = catalog
    .filter((m) => m.id.split("/")[0] === id.split("/")[0])
    .slice(0, 6)
    .map((m) => m.id)
  throw usage(
    `OpenCode has no model "${id}" (for ${role}).`,
    `Pick one \`opencode models\` lists${near.length ? `, e.g. ${near.join(", ")}` : ""}.`,
  )
}

/** Choices from flags over the existing config (and the detected clients when none were ever chosen). */
export function choicesFromFlags(
  flags: FlagValues,
  existing: Config,
  detected: Integration[],
  hasConfig: boolean,
): Choices {
  const models: RoleModels = { ...existing.models, ...(flags.models ? parseRoleList("models", flags.models) : {}) }
  const variants: PerRole = { ...existing.modelVariants }
  // A variant belongs to a model: a role given another model starts from OpenCode's default variant.
  for (const role of ROLES) if (models[role] !== existing.models[role]) variants[role] = undefined
  for (const [role, value] of Object.entries(flags.variants ? parseRoleList("variants", flags.variants) : {}))
    variants[role as Role] = value === "default" ? undefined : value
  const stepLimits = flags.steps ? parseSteps(flags.steps) : (existing.stepLimits ?? { profile: "standard" })
  const sameAsSteps: TimeoutChoice = { profile: stepLimits.profile === "extended" ? "extended" : "standard" }
  const timeoutLimits = flags.timeouts
    ? parseTimeouts(flags.timeouts)
    : flags.steps && stepLimits.profile !== "custom"
      ? sameAsSteps
      : (existing.timeoutLimits ?? sameAsSteps)
  return {
    models,
    variants,
    stepLimits,
    timeoutLimits,
    integrations:
      flags.integrations !== undefined
        ? parseIntegrations(flags.integrations)
        : hasConfig
          ? existing.integrations
          : detected,
  }
}

/** The config.json content: the existing config with the choices applied, validated by the schema. */
export function configFromChoices(existing: Config, choices: Choices, file: string): Config {
  const strip = (values: PerRole | RoleModels) => Object.fromEntries(Object.entries(values).filter(([, v]) => v))
  const next = {
    ...existing,
    version: 1,
    models: strip(choices.models),
    modelVariants: strip(choices.variants),
    stepLimits: choices.stepLimits,
    timeoutLimits: choices.timeoutLimits,
    integrations: choices.integrations,
  }
  try {
    return parseConfig(next, `${file} (as the installer would write it)`)
  } catch (error) {
    throw usage(
      error instanceof Error ? error.message : String(error),
      "Fix the values above (--models, --variants, --steps, --timeouts); nothing was changed.",
    )
  }
}

/** `--models scout=a worker=b runner=c` (space-separated, as people type it) joined into one value. */
export function roleArg(rawArgs: string[], flag: string): string | undefined {
  const values: string[] = []
  for (let i = 0; i < rawArgs.length; i++) {
    const arg = rawArgs[i]!
    if (arg.startsWith(`--${flag}=`)) values.push(arg.slice(flag.length + 3))
    else if (arg === `--${flag}`) {
      while (i + 1 < rawArgs.length && !rawArgs[i + 1]!.startsWith("--")) values.push(rawArgs[++i]!)
    }
  }
  return values.length ? values.join(",") : undefined
}
