// The wizard against a fake prompter that answers from queues (as nuxt/cli's init-flow test does):
// each prompt kind takes the next answer of its queue; CANCEL anywhere stops the install unchanged.
import { describe, expect, test } from "bun:test"
import { existsSync, readdirSync } from "node:fs"
import { defaultConfig } from "../../src/config/schema"
import { choicesFromFlags } from "../../src/install/choices"
import { CANCEL, runWizard, type Cancel, type Prompter } from "../../src/install/wizard"
import { run } from "../../src/util/process"
import { installYes, machine } from "./helpers"

type Answer = string | string[] | boolean | Cancel

function fakePrompter(answers: { select?: Answer[]; multiselect?: Answer[]; text?: Answer[]; confirm?: Answer[] }) {
  const asked: string[] = []
  const queue = (kind: keyof typeof answers, message: string) => {
    asked.push(`${kind}: ${message}`)
    const next = answers[kind]?.shift()
    if (next === undefined) throw new Error(`no ${kind} answer queued for "${message}"`)
    return next
  }
  const prompter: Prompter = {
    select: async (q) => {
      const answer = queue("select", q.message)
      if (answer !== CANCEL && !q.options.some((o) => o.value === answer))
        throw new Error(`"${String(answer)}" is not offered for "${q.message}"`)
      return answer as never
    },
    multiselect: async (q) => queue("multiselect", q.message) as never,
    text: async (q) => {
      const answer = queue("text", q.message)
      if (typeof answer === "string" && q.validate?.(answer))
        throw new Error(`"${answer}" rejected: ${q.validate(answer)}`)
      return answer as never
    },
    confirm: async (q) => queue("confirm", q.message) as never,
    note: () => {},
  }
  return { prompter, asked, answers }
}

const catalog = [
  { id: "local/m", name: "m", variants: ["low", "high"] },
  { id: "local/n", name: "n", variants: [] },
]
const start = choicesFromFlags({}, defaultConfig(), ["codex"], false)

describe("wizard", () => {
  test("a role's list from config.json stays while its first model is kept, and is replaced by another", async () => {
    const existing = { ...defaultConfig(), models: { scout: ["local/n", "local/m"], worker: ["local/n", "local/m"] } }
    const { prompter } = fakePrompter({
      select: ["local/n", "local/m", "(default)", "(opencode-default)", "standard"],
      multiselect: [["codex"]],
      confirm: [false],
    })
    const choices = await runWizard(prompter, {
      catalog,
      detected: ["codex"],
      start: choicesFromFlags({}, existing, ["codex"], true),
    })
    expect(choices === CANCEL ? undefined : choices.models).toEqual({
      scout: ["local/n", "local/m"],
      worker: "local/m",
    })
  })

  test("per-role models with variants offered only where the model has them, Default leaving it to OpenCode", async () => {
    const { prompter, asked } = fakePrompter({
      select: ["local/m", "low", "local/n", "local/m", "(default)", "standard"],
      multiselect: [["codex", "claude"]],
      confirm: [false],
    })
    const choices = await runWizard(prompter, { catalog, detected: ["codex"], start })
    expect(choices).toEqual({
      models: { scout: "local/m", worker: "local/n", runner: "local/m" },
      variants: { scout: "low" },
      stepLimits: { profile: "standard" },
      timeoutLimits: { profile: "standard" },
      integrations: ["codex", "claude"],
      codexApprove: false,
    })
    expect(asked).toContain(
      'confirm: Codex: run our tools without asking you on each call? (default_tools_approval_mode = "approve")',
    )
    expect(asked).not.toContain("select: Variant of local/n for worker")
  })

  test("custom profile asks steps and timeouts separately and validates them", async () => {
    const { prompter } = fakePrompter({
      select: ["(opencode-default)", "(opencode-default)", "(opencode-default)", "custom"],
      text: ["custom:8,16,24", "extended"],
      multiselect: [[]],
    })
    const choices = await runWizard(prompter, { catalog, detected: [], start })
    expect(choices).toMatchObject({
      models: {},
      stepLimits: { profile: "custom", scout: 8, worker: 16, runner: 24 },
      timeoutLimits: { profile: "extended" },
      integrations: [],
    })
  })

  const cancelAt: Array<[string, Parameters<typeof fakePrompter>[0]]> = [
    ["the first model", { select: [CANCEL] }],
    ["a variant", { select: ["local/m", CANCEL] }],
    ["the profile", { select: ["local/n", "local/n", "local/n", CANCEL] }],
    ["custom steps", { select: ["local/n", "local/n", "local/n", "custom"], text: [CANCEL] }],
    ["the integrations", { select: ["local/n", "local/n", "local/n", "extended"], multiselect: [CANCEL] }],
    [
      "the Codex approval",
      { select: ["local/n", "local/n", "local/n", "extended"], multiselect: [["codex"]], confirm: [CANCEL] },
    ],
  ]
  for (const [where, answers] of cancelAt)
    test(`cancelling at ${where} returns CANCEL`, async () => {
      expect(await runWizard(fakePrompter(answers).prompter, { catalog, detected: [], start })).toBe(CANCEL)
    })
})

describe("install with the wizard", () => {
  const full = () => ({
    select: ["local/m", "high", "local/n", "local/n", "extended"],
    multiselect: [["codex"]] as Answer[],
  })

  test("cancelling at the final confirmation writes nothing at all", async () => {
    using m = machine()
    // The real OpenCode answers the model discovery and keeps its own log and database; run it once
    // first so the comparison below sees only what the installer itself would write.
    await run([m.opencode, "models"], { env: m.env })
    const before = readdirSync(m.home, { recursive: true }).sort()
    const { prompter } = fakePrompter({ ...full(), confirm: [false, CANCEL] })
    const { code, lines } = await installYes(m, {}, { prompter })
    expect(code).toBe(1)
    expect(lines.at(-1)).toBe("Install cancelled; nothing was changed.")
    expect(readdirSync(m.home, { recursive: true }).sort()).toEqual(before)
  })

  test("cancelling mid-wizard writes nothing either", async () => {
    using m = machine()
    const { prompter } = fakePrompter({ select: ["local/m", CANCEL] })
    const { code } = await installYes(m, {}, { prompter })
    expect(code).toBe(1)
    expect(existsSync(m.paths.configFile)).toBe(false)
    expect(existsSync(m.paths.current)).toBe(false)
  })

  test("answering everything installs what was chosen", async () => {
    using m = machine()
    // Yes to Codex running our tools without a prompt per call, then yes to applying.
    const { prompter } = fakePrompter({ ...full(), confirm: [true, true] })
    const { code } = await installYes(m, {}, { prompter })
    expect(code).toBe(0)
    const config = await Bun.file(m.paths.configFile).json()
    expect(config).toMatchObject({
      models: { scout: "local/m", worker: "local/n", runner: "local/n" },
      modelVariants: { scout: "high" },
      stepLimits: { profile: "extended" },
      integrations: ["codex"],
    })
    expect(await Bun.file(`${m.paths.opencodeAgentsDir}/opencode-orchestrator-scout.md`).text()).toContain("steps: 32")
    expect(await Bun.file(`${m.home}/.codex/config.toml`).text()).toContain('default_tools_approval_mode = "approve"')
  })
})
