import { describe, expect, test } from "bun:test"
import { homedir } from "node:os"
import { readFlags } from "../../src/config/flags"
import { parseInteger } from "../../src/config/integer"
import { exitCodeOf } from "../../src/cli/exit"
import { AppError, ErrorKinds } from "../../src/errors"
import { errorResult } from "../../src/mcp/replies"

const VARIABLE = "OPENCODE_MCP_ORCHESTRATOR_SYNC_BUDGET_MS"
const range = { min: 1000, max: 3_600_000 }

function errorOf(raw: string): AppError {
  try {
    parseInteger(VARIABLE, raw, range)
  } catch (error) {
    if (error instanceof AppError) return error
    throw error
  }
  throw new Error(`${JSON.stringify(raw)} was accepted`)
}

describe("parseInteger", () => {
  test("unset and empty both mean the caller's default", () => {
    expect(parseInteger(VARIABLE, undefined, range)).toBeUndefined()
    expect(parseInteger(VARIABLE, "", range)).toBeUndefined()
  })

  test("digits within the range are the number, the bounds included", () => {
    expect(parseInteger(VARIABLE, "1000", range)).toBe(1000)
    expect(parseInteger(VARIABLE, "3600000", range)).toBe(3_600_000)
    expect(parseInteger(VARIABLE, "060000", range)).toBe(60_000)
  })

  const rejected: [string, string, RegExp][] = [
    ["whitespace only", " ", /Remove the whitespace/],
    ["a tab", "\t", /Remove the whitespace/],
    ["a leading space", " 60000", /Remove the whitespace/],
    ["a trailing newline", "60000\n", /Remove the whitespace/],
    ["a word", "sixty", /digits only/],
    ["a unit", "60s", /digits only/],
    ["an exponent", "6e4", /digits only/],
    ["a decimal point", "60000.0", /digits only/],
    ["a sign", "+60000", /digits only/],
    ["a negative number", "-1", /digits only/],
    ["hexadecimal", "0xEA60", /digits only/],
    ["too long for a double to hold exactly", "99999999999999999999", /from 1000 to 3600000/],
    ["below the range", "999", /from 1000 to 3600000/],
    ["above the range", "3600001", /from 1000 to 3600000/],
    ["zero", "0", /from 1000 to 3600000/],
  ]
  for (const [name, raw, hint] of rejected)
    test(`${name} (${JSON.stringify(raw)}) is a usage error naming the variable, with a hint`, () => {
      const error = errorOf(raw)
      expect(error.kind).toBe("Usage")
      expect(error.message).toBe(
        `${VARIABLE}=${JSON.stringify(raw)} is invalid: expected an integer from 1000 to 3600000.`,
      )
      expect(error.hint).toContain(VARIABLE)
      expect(error.hint).toMatch(hint)
      expect(error.hint).toContain("unset")
      expect(error.data).toEqual({ variable: VARIABLE, value: raw, min: 1000, max: 3_600_000 })
    })

  test("the message names the default when there is one", () => {
    expect(() => parseInteger(VARIABLE, "x", { ...range, fallback: 5000 })).toThrow(
      "expected an integer from 1000 to 3600000 (default 5000).",
    )
  })

  test("the error exits with the documented usage code and reads like any other error in an MCP result", () => {
    const error = errorOf("sixty")
    expect(exitCodeOf(error)).toBe(ErrorKinds.Usage)
    const result = errorResult(error)
    expect(result.isError).toBe(true)
    expect(result.content).toEqual([{ type: "text", text: `${error.message}\nnext: ${error.hint}` }])
  })
})

describe("readFlags: one rule for empty values, one HOME fallback", () => {
  test("empty integer variables keep their defaults", () => {
    const flags = readFlags({
      HOME: "/h",
      OPENCODE_MCP_ORCHESTRATOR_BRIDGE_TIMEOUT_MS: "",
      OPENCODE_MCP_ORCHESTRATOR_SYNC_BUDGET_MS: "",
      OPENCODE_MCP_ORCHESTRATOR_MAX_BRIEF_BYTES: "",
    })
    expect(flags).toMatchObject({ bridgeTimeoutMs: undefined, syncBudgetMs: undefined, maxBriefBytes: 65_536 })
  })

  test("empty string variables are unset too", () => {
    const flags = readFlags({
      HOME: "/h",
      PATH: "",
      OPENCODE_MCP_ORCHESTRATOR_OPENCODE: "",
      OPENCODE_SANDBOX_TOOLCHAIN_DIRS: "",
      CODEX_HOME: "",
      TMPDIR: "",
    })
    expect(flags).toMatchObject({
      path: undefined,
      opencodeBin: "opencode",
      sandbox: { toolchainDirs: undefined },
      codexHome: "/h/.codex",
      tmpDir: "/tmp",
    })
  })

  test("a bad integer variable stops readFlags with its name", () => {
    expect(() => readFlags({ HOME: "/h", OPENCODE_MCP_ORCHESTRATOR_BRIDGE_TIMEOUT_MS: "5m" })).toThrow(
      'OPENCODE_MCP_ORCHESTRATOR_BRIDGE_TIMEOUT_MS="5m" is invalid',
    )
  })

  test("HOME unset or empty falls back to os.homedir() (the account's home), like an unset one", () => {
    expect(readFlags({}).home).toBe(homedir())
    expect(readFlags({ HOME: "" }).home).toBe(homedir())
    expect(readFlags({ HOME: "" }).xdgConfigHome).toBe(`${homedir()}/.config`)
  })

  test("relocations apply only as absolute paths", () => {
    const flags = readFlags({
      HOME: "/h",
      XDG_STATE_HOME: "relative",
      CODEX_HOME: "/c",
      CLAUDE_CONFIG_DIR: "relative",
      TMPDIR: "/t",
    })
    expect(flags).toMatchObject({
      xdgStateHome: "/h/.local/state",
      codexHome: "/c",
      claudeConfigDir: undefined,
      tmpDir: "/t",
    })
  })
})
