import { describe, expect, test } from "bun:test"
import { defaultConfig } from "../../src/config/schema"
import { AppError } from "../../src/errors"
import {
  checkModels,
  choicesFromFlags,
  configFromChoices,
  parseRoleList,
  parseSteps,
  parseTimeouts,
  roleArg,
} from "../../src/install/choices"

const catalog = [
  { id: "local/m", name: "m", variants: ["low", "high"] },
  { id: "local/n", name: "n", variants: [] },
]

describe("flags", () => {
  test("role lists: comma, space (as typed after --models) and one model for all", () => {
    expect(parseRoleList("models", "scout=a/b,worker=c/d")).toEqual({ scout: "a/b", worker: "c/d" })
    expect(parseRoleList("models", "a/b")).toEqual({ scout: "a/b", worker: "a/b", runner: "a/b" })
    expect(roleArg(["--models", "scout=a/b", "worker=c/d", "--yes"], "models")).toBe("scout=a/b,worker=c/d")
    expect(roleArg(["--models=scout=a/b"], "models")).toBe("scout=a/b")
    expect(() => parseRoleList("models", "boss=a/b")).toThrow(/role=value/)
  })

  test("profiles", () => {
    expect(parseSteps("extended")).toEqual({ profile: "extended" })
    expect(parseSteps("custom:8,16,24")).toEqual({ profile: "custom", scout: 8, worker: 16, runner: 24 })
    expect(parseTimeouts("custom:60,120,180,300")).toEqual({
      profile: "custom",
      scout: 60,
      worker: 120,
      runner: 180,
      parent: 300,
    })
    expect(() => parseSteps("huge")).toThrow(/step profile/)
    expect(() => parseTimeouts("custom:1,2")).toThrow(/4 whole numbers/)
  })

  test("--steps extended picks the extended timeouts too; the config keeps what was not chosen again", () => {
    const existing = {
      ...defaultConfig(),
      models: { scout: "local/m" },
      modelVariants: { scout: "low" },
      integrations: ["claude" as const],
    }
    const choices = choicesFromFlags({ steps: "extended" }, existing, ["codex"], true)
    expect(choices.timeoutLimits).toEqual({ profile: "extended" })
    expect(choices.models).toEqual({ scout: "local/m" })
    expect(choices.variants).toEqual({ scout: "low" })
    expect(choices.integrations).toEqual(["claude"])
    expect(choicesFromFlags({}, defaultConfig(), ["codex"], false).integrations).toEqual(["codex"])
  })

  test("a role given another model drops its old variant; default clears a variant", () => {
    const existing = {
      ...defaultConfig(),
      models: { scout: "local/m", worker: "local/m" },
      modelVariants: { scout: "low", worker: "high" },
    }
    const choices = choicesFromFlags({ models: "scout=local/n", variants: "worker=default" }, existing, [], true)
    expect(choices.variants).toEqual({ scout: undefined, worker: undefined, runner: undefined })
  })

  test("models and variants are checked against OpenCode's catalog with the fix named", () => {
    expect(() => checkModels({ models: { scout: "local/zz" }, variants: {} }, catalog)).toThrow(/no model "local\/zz"/)
    expect(() => checkModels({ models: { scout: "local/m" }, variants: { scout: "max" } }, catalog)).toThrow(
      /no variant "max"/,
    )
    expect(() => checkModels({ models: { scout: "local/m" }, variants: { scout: "low" } }, catalog)).not.toThrow()
  })

  test("an impossible timeout combination is a usage error before anything is written", () => {
    const choices = choicesFromFlags({ timeouts: "custom:300,600,1200,1000" }, defaultConfig(), [], false)
    let error: unknown
    try {
      configFromChoices(defaultConfig(), choices, "/x/config.json")
    } catch (e) {
      error = e
    }
    expect(error).toBeInstanceOf(AppError)
    expect((error as AppError).kind).toBe("Usage")
    expect((error as AppError).message).toMatch(/parent \(1000s\) must be at least 60s longer than runner/)
  })
})

describe("a role's model list (edited by hand in config.json)", () => {
  const existing = { ...defaultConfig(), models: { scout: ["local/m", "local/n"] } }

  test("install without --models keeps the list; --models for the role replaces it with one model", () => {
    const kept = configFromChoices(existing, choicesFromFlags({}, existing, [], true), "/c.json")
    expect(kept.models.scout).toEqual(["local/m", "local/n"])
    const replaced = choicesFromFlags({ models: "scout=local/n" }, existing, [], true)
    expect(configFromChoices(existing, replaced, "/c.json").models.scout).toBe("local/n")
  })

  test("every model of a list is checked against the catalog", () => {
    expect(() => checkModels({ models: existing.models, variants: {} }, catalog)).not.toThrow()
    expect(() => checkModels({ models: { scout: ["local/m", "local/zz"] }, variants: {} }, catalog)).toThrow(
      /no model "local\/zz"/,
    )
  })
})
