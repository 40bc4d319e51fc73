// The interactive installer: the same choices as the flags, asked one at a time. It talks to a
// Prompter, so tests answer from queues; cancelling at any prompt returns CANCEL and nothing is written.
import { ROLES, roleModels, STEP_PROFILES, TIMEOUT_PROFILES, type Role } from "../config/schema"
import type { CatalogModel } from "../opencode/catalog"
import {
  parseSteps,
  parseTimeouts,
  type Choices,
  type PerRole,
  type RoleModels,
  type StepChoice,
  type TimeoutChoice,
} from "./choices"
import { INTEGRATIONS, type Integration } from "./plan"

export const CANCEL: unique symbol = Symbol("cancel")
export type Cancel = typeof CANCEL

export interface Option<T extends string> {
  value: T
  label: string
  hint?: string
}

export interface Prompter {
  select<T extends string>(question: { message: string; options: Option<T>[]; initialValue?: T }): Promise<T | Cancel>
  multiselect<T extends string>(question: {
    message: string
    options: Option<T>[]
    initialValues?: T[]
  }): Promise<T[] | Cancel>
  text(question: {
    message: string
    initialValue?: string
    validate?: (value: string) => string | undefined
  }): Promise<string | Cancel>
  confirm(question: { message: string; initialValue?: boolean }): Promise<boolean | Cancel>
  note(message: string): void
}

const DEFAULT_MODEL = "(opencode-default)"
const DEFAULT_VARIANT = "(default)"

const describeSteps = (p: "standard" | "extended") =>
  `steps ${Object.values(STEP_PROFILES[p]).join("/")}, timeouts ${Object.values(TIMEOUT_PROFILES[p])
    .map((s) => `${s}s`)
    .join("/")} (scout/worker/runner/parent)`

const check = (parse: (raw: string) => unknown) => (value: string) => {
  try {
    parse(value)
    return undefined
  } catch (error) {
    return error instanceof Error ? error.message : String(error)
  }
}

async function chooseModels(
  prompter: Prompter,
  catalog: CatalogModel[],
  start: Choices,
): Promise<{ models: RoleModels; variants: PerRole } | Cancel> {
  const models: RoleModels = {}
  const variants: PerRole = {}
  for (const role of ROLES) {
    const model = await prompter.select<string>({
      message: `Model for ${role}`,
      options: [
        { value: DEFAULT_MODEL, label: "OpenCode's default model" },
        ...catalog.map((m) => ({
          value: m.id,
          label: m.id,
          hint: m.variants.length ? `variants: ${m.variants.join(", ")}` : undefined,
        })),
      ],
      initialValue: roleModels(start, role)[0] ?? DEFAULT_MODEL,
    })
    if (model === CANCEL) return CANCEL
    if (model === DEFAULT_MODEL) continue
    // The wizard picks one model; a list config.json gives (edited by hand) is kept while its first is kept.
    const kept = roleModels(start, role)[0] === model
    models[role] = kept ? start.models[role] : model
    const offered = catalog.find((m) => m.id === model)?.variants ?? []
    if (offered.length === 0) continue
    const keptVariant = kept ? start.variants[role] : undefined
    const variant = await prompter.select<string>({
      message: `Variant of ${model} for ${role}`,
      options: [
        { value: DEFAULT_VARIANT, label: "Default", hint: "OpenCode decides" },
        ...offered.map((v) => ({ value: v, label: v })),
      ],
      initialValue: keptVariant ?? DEFAULT_VARIANT,
    })
    if (variant === CANCEL) return CANCEL
    if (variant !== DEFAULT_VARIANT) variants[role as Role] = variant
  }
  return { models, variants }
}

async function chooseLimits(
  prompter: Prompter,
  start: Choices,
): Promise<{ stepLimits: StepChoice; timeoutLimits: TimeoutChoice } | Cancel> {
  const profile = await prompter.select<"standard" | "extended" | "custom">({
    message: "Step and timeout profile",
    options: [
      { value: "standard", label: "Standard", hint: describeSteps("standard") },
      { value: "extended", label: "Extended", hint: describeSteps("extended") },
      { value: "custom", label: "Custom", hint: "choose steps and timeouts separately" },
    ],
    initialValue: start.stepLimits.profile === start.timeoutLimits.profile ? start.stepLimits.profile : "custom",
  })
  if (profile === CANCEL) return CANCEL
  if (profile !== "custom") return { stepLimits: { profile }, timeoutLimits: { profile } }
  const steps = await prompter.text({
    message: "Steps: standard, extended or custom:SCOUT,WORKER,RUNNER (4..256)",
    initialValue:
      start.stepLimits.profile === "custom"
        ? `custom:${start.stepLimits.scout},${start.stepLimits.worker},${start.stepLimits.runner}`
        : start.stepLimits.profile,
    validate: check(parseSteps),
  })
  if (steps === CANCEL) return CANCEL
  const limits = start.timeoutLimits
  const timeouts = await prompter.text({
    message: "Timeouts: standard, extended or custom:SCOUT,WORKER,RUNNER,PARENT (seconds)",
    initialValue:
      limits.profile === "custom"
        ? `custom:${limits.scout},${limits.worker},${limits.runner},${limits.parent}`
        : limits.profile,
    validate: check(parseTimeouts),
  })
  if (timeouts === CANCEL) return CANCEL
  return { stepLimits: parseSteps(steps), timeoutLimits: parseTimeouts(timeouts) }
}

/** Asks for every choice, starting from `start` (the existing config or the flags). */
export async function runWizard(
  prompter: Prompter,
  input: { catalog: CatalogModel[]; detected: Integration[]; start: Choices },
): Promise<Choices | Cancel> {
  const chosenModels = await chooseModels(prompter, input.catalog, input.start)
  if (chosenModels === CANCEL) return CANCEL
  const limits = await chooseLimits(prompter, input.start)
  if (limits === CANCEL) return CANCEL
  const integrations = await prompter.multiselect<Integration>({
    message: "Register with which clients?",
    options: INTEGRATIONS.map((name) => ({
      value: name,
      label: name === "codex" ? "Codex CLI" : "Claude Code",
      hint: input.detected.includes(name) ? "installed" : "not found on PATH",
    })),
    initialValues: input.start.integrations,
  })
  if (integrations === CANCEL) return CANCEL
  if (!integrations.includes("codex")) return { ...chosenModels, ...limits, integrations }
  const codexApprove = await prompter.confirm({
    message: 'Codex: run our tools without asking you on each call? (default_tools_approval_mode = "approve")',
    initialValue: input.start.codexApprove ?? false,
  })
  if (codexApprove === CANCEL) return CANCEL
  return { ...chosenModels, ...limits, integrations, codexApprove }
}
