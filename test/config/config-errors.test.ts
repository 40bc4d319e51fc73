// config.json mistakes a person makes by hand: a syntax error is placed by line and column, and an
// unknown key names the nearest known one.
import { describe, expect, test } from "bun:test"
import { loadConfig, parseConfig } from "../../src/config/load"
import { jsonErrorOffset, jsonErrorPlace } from "../../src/util/json-position"
import { tempDir } from "../helpers/temp"

const message = async (run: () => Promise<unknown> | unknown) => {
  try {
    await run()
  } catch (error) {
    return (error as Error).message
  }
  throw new Error("expected an error")
}

describe("a syntax error in config.json", () => {
  const table: [string, string, string][] = [
    ["a missing colon", '{\n  "version": 1,\n  "models" {}\n}\n', "line 3, column 12"],
    ["a trailing comma", '{\n  "version": 1,\n}', "line 3, column 1"],
    ["a missing comma", '{ "version": 1\n  "models": {} }', "line 2, column 3"],
    ["a comment", '// mine\n{ "version": 1 }', "line 1, column 1"],
    ["a single-quoted string", "{ 'version': 1 }", "line 1, column 3"],
    ["a cut-off file", '{\n  "version": 1,\n  "models": {', "line 3, column 14"],
    ["an empty file", "", "line 1, column 1"],
    ["a raw tab in a string", '{ "version": 1, "$schema": "a\tb" }', "line 1, column 30"],
  ]
  for (const [what, text, place] of table) {
    test(`${what}: the error says ${place}`, async () => {
      await using dir = await tempDir("config-syntax-")
      const file = `${dir.path}/config.json`
      await Bun.write(file, text)
      const said = await message(() => loadConfig(file))
      expect(said).toContain(`${file} is not valid JSON at ${place}:`)
    })
  }

  // The scanner must agree with JSON.parse on what is JSON, or it would place errors that are not there.
  test("the scanner agrees with JSON.parse on 3,000 mutations of a real config", () => {
    const base = JSON.stringify(
      {
        version: 1,
        models: { scout: "local/m" },
        maxParallel: 3,
        policy: { relay: ["question"], requireTier: false },
        x: [1.5e3, -0, "\u00e9\\n", null, true],
      },
      null,
      2,
    )
    const alphabet = ['"', ",", ":", "{", "}", "[", "]", " ", "\n", "0", "-", ".", "e", "\\", "u", "t", "n", "1"]
    let seed = 7
    const random = (n: number) => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31
      return seed % n
    }
    let disagreements = 0
    for (let round = 0; round < 3000; round++) {
      let text = base
      for (let edits = 1 + random(3); edits > 0; edits--) {
        const at = random(text.length + 1)
        const kind = random(3)
        const char = alphabet[random(alphabet.length)]!
        text =
          kind === 0
            ? text.slice(0, at) + text.slice(at + 1)
            : kind === 1
              ? text.slice(0, at) + char + text.slice(at)
              : text.slice(0, at) + char + text.slice(at + 1)
      }
      let valid = true
      try {
        JSON.parse(text)
      } catch {
        valid = false
      }
      if (valid !== (jsonErrorOffset(text) === undefined)) disagreements++
    }
    expect(disagreements).toBe(0)
  })

  test("control: valid JSON has no place; nesting deeper than any stack is placed like the rest", () => {
    expect(jsonErrorPlace('{"a": [1, 2, {"b": "\\u00e9"}]}')).toBe("")
    expect(jsonErrorPlace(`${"[".repeat(200_000)}x`)).toBe(" at line 1, column 200001")
  })
})

describe("an unknown key in config.json", () => {
  const table: [unknown, RegExp][] = [
    [{ version: 1, maxParalel: 2 }, /\(top level\): unknown field "maxParalel"; did you mean "maxParallel"\?/],
    [{ version: 1, model: {} }, /unknown field "model"; did you mean "models"\?/],
    [{ version: 1, models: { scuot: "a/b" } }, /models: unknown field "scuot"; did you mean "scout"\?/],
    [
      { version: 1, policy: { requireTeir: true } },
      /policy: unknown field "requireTeir"; did you mean "requireTier"\?/,
    ],
    [
      { version: 1, sandboxRuntime: { trustedRoots: [{ root: "/opt/x", pathEntry: [] }] } },
      /sandboxRuntime\.trustedRoots\.0: unknown field "pathEntry"; did you mean "pathEntries"\?/,
    ],
    [
      { version: 1, stepLimits: { profile: "custom", scout: 8, worker: 8, runner: 8, runer: 9 } },
      /stepLimits: unknown field "runer"; did you mean "runner"\?/,
    ],
  ]
  for (const [raw, pattern] of table)
    test(JSON.stringify(raw), async () => expect(await message(() => parseConfig(raw, "config.json"))).toMatch(pattern))

  test("control: a key like nothing known says only to remove it", async () => {
    const said = await message(() => parseConfig({ version: 1, frobnicate: true }, "config.json"))
    expect(said).toContain('unknown field "frobnicate"; remove it')
    expect(said).not.toContain("did you mean")
  })
})
