// Where the policy's settings come from outside a call: config.json's policy field (added without a
// version bump, so files written before it stay valid) and OPENCODE_MCP_ORCHESTRATOR_MODE.
import { describe, expect, test } from "bun:test"
import { readFlags } from "../../src/config/flags"
import { AppError } from "../../src/errors"
import { parseConfig } from "../../src/config/load"

describe("config.json policy", () => {
  test("a file written before the field exists parses to blueprint with the tier optional and nothing relayed", () => {
    const config = parseConfig({ version: 1, models: {}, integrations: ["claude"] }, "config.json")
    expect(config.policy).toEqual({ requireTier: false, relay: [], respondWaitSeconds: 600 })
  })

  test("mode and requireTier are read; a policy written before relay existed relays nothing", () => {
    expect(parseConfig({ version: 1, policy: { mode: "sensitive", requireTier: true } }, "config.json").policy).toEqual(
      { mode: "sensitive", requireTier: true, relay: [], respondWaitSeconds: 600 },
    )
  })

  test("relay takes question, webfetch and websearch; bash or a sandbox tool is refused, naming the field", () => {
    expect(
      parseConfig({ version: 1, policy: { relay: ["question", "webfetch", "websearch"] } }, "config.json").policy.relay,
    ).toEqual(["question", "webfetch", "websearch"])
    for (const tool of ["bash", "sandbox_shell", "edit"])
      expect(() => parseConfig({ version: 1, policy: { relay: [tool] } }, "config.json")).toThrow(/policy\.relay/)
  })

  test("an unknown mode or field names the field", () => {
    expect(() => parseConfig({ version: 1, policy: { mode: "paranoid" } }, "config.json")).toThrow(/policy\.mode/)
    expect(() => parseConfig({ version: 1, policy: { requireTeir: true } }, "config.json")).toThrow(
      /policy: unknown field "requireTeir"/,
    )
  })
})

describe("OPENCODE_MCP_ORCHESTRATOR_MODE", () => {
  test("unset or empty states no mode; a mode is read", () => {
    expect(readFlags({ HOME: "/h" }).mode).toBeUndefined()
    expect(readFlags({ HOME: "/h", OPENCODE_MCP_ORCHESTRATOR_MODE: "" }).mode).toBeUndefined()
    expect(readFlags({ HOME: "/h", OPENCODE_MCP_ORCHESTRATOR_MODE: "sensitive" }).mode).toBe("sensitive")
  })

  test("anything else is refused at startup, naming the values it takes", () => {
    expect(() => readFlags({ HOME: "/h", OPENCODE_MCP_ORCHESTRATOR_MODE: "Sensitive" })).toThrow(AppError)
    expect(() => readFlags({ HOME: "/h", OPENCODE_MCP_ORCHESTRATOR_MODE: "strict" })).toThrow(
      /one of blueprint, sensitive, insensitive/,
    )
  })
})
