// Each plugin tool is declared once (plugin/tool.ts): the tool set is pinned, every description is a
// .md file in plugin/text, every declared argument is checked before `execute` (a required one left
// out, null or of another type is refused with a message naming it), and no tool reads its arguments
// by hand. The config slice the plugin reads is the zod schema's: whatever config.json the schema
// refuses, the plugin refuses with the same message; whatever it accepts, the plugin reads as parsed.
import { describe, expect, test } from "bun:test"
import { readdirSync, readFileSync } from "node:fs"
import { configRefusal, configSliceOf } from "../../plugin/env"
import { pluginTools } from "../../plugin/registry"
import { parseConfig } from "../../src/config/load"
import { AppError, fail } from "../../src/errors"
import { FILES_MARKER } from "../../src/sandbox"

const TEXT_DIR = `${import.meta.dir}/../../plugin/text`
const SANDBOX_TOOLS = [
  "sandbox_shell",
  "sandbox_log_read",
  "sandbox_log_grep",
  "sandbox_run_ro",
  "sandbox_run",
  "sandbox_run_network_ro",
  "sandbox_run_network",
]
const FILE_TOOLS = ["read", "write", "edit", "apply_patch", "grep", "glob", FILES_MARKER]

test("the tool set: the sandbox tools everywhere, the file tools on the shared server only", () => {
  expect(pluginTools(false).map((tool) => tool.name)).toEqual(SANDBOX_TOOLS)
  expect(pluginTools(true).map((tool) => tool.name)).toEqual([...SANDBOX_TOOLS, ...FILE_TOOLS])
})

/** A .md text as a pattern: its `{{placeholders}}` stand for whatever the tool filled in. */
const templateOf = (text: string) =>
  new RegExp(
    `^${text
      .trim()
      .split(/\{\{\w+\}\}/)
      .map((part) => part.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&"))
      .join("[^\\n]*")}$`,
  )

test("every tool's description is a .md file in plugin/text, its placeholders filled in", () => {
  const texts = readdirSync(TEXT_DIR)
    .filter((file) => file.endsWith(".md"))
    .map((file) => [file, readFileSync(`${TEXT_DIR}/${file}`, "utf8")] as const)
  for (const tool of pluginTools(true)) {
    const { description } = tool.definition
    expect(description).not.toContain("{{")
    expect({ tool: tool.name, from: texts.filter(([, text]) => templateOf(text).test(description)).length }).toEqual({
      tool: tool.name,
      from: 1,
    })
  }
})

test("control: the description check tells a filled template from another text", () => {
  expect(templateOf("Run {{x}} now.").test("Run ls -la now.")).toBe(true)
  expect(templateOf("Run {{x}} now.").test("Run ls later.")).toBe(false)
})

/** A value each declared type accepts, so a call can leave out exactly one argument. */
const sample = (type: string) => ({ string: "x", integer: 1, number: 1, boolean: true })[type]

describe("every declared argument is checked before execute", () => {
  const tools = pluginTools(true)
  test("the write tool requires content and filePath; edit its three strings; each tool its own", () => {
    const required = Object.fromEntries(tools.map((tool) => [tool.name, tool.required]))
    expect(required.write).toEqual(["content", "filePath"])
    expect(required.edit).toEqual(["filePath", "oldString", "newString"])
    expect(required.apply_patch).toEqual(["patchText"])
    expect(required.sandbox_shell).toEqual(["command"])
    expect(required.sandbox_run).toEqual(["command"])
    expect(required.sandbox_log_grep).toEqual(["pattern"])
  })

  for (const tool of tools) {
    const args = tool.definition.args
    const valid = Object.fromEntries(Object.entries(args).map(([key, schema]) => [key, sample(schema.type)]))
    test(`${tool.name}: a full call passes (control); a wrong-typed or missing required argument is refused`, () => {
      expect(Object.keys(tool.parse(valid)).sort()).toEqual(Object.keys(args).sort())
      for (const key of Object.keys(args)) {
        for (const bad of [{}, [1], { nested: "x" }])
          expect(() => tool.parse({ ...valid, [key]: bad })).toThrow(`${tool.name}: the "${key}" argument`)
        // The bounds OpenCode shows the model are the ones checked.
        const { minimum, maximum } = args[key]!
        if (maximum !== undefined) {
          expect(tool.parse({ ...valid, [key]: maximum })[key]).toBe(maximum)
          expect(() => tool.parse({ ...valid, [key]: maximum + 1 })).toThrow(`the "${key}" argument must be`)
        }
        if (minimum !== undefined && minimum > 1)
          expect(() => tool.parse({ ...valid, [key]: minimum - 1 })).toThrow(`the "${key}" argument must be`)
        if (minimum !== undefined) expect(() => tool.parse({ ...valid, [key]: -1 })).toThrow("must be an integer")
        if (!tool.required.includes(key)) continue
        const { [key]: _, ...without } = valid
        for (const call of [without, { ...valid, [key]: null }, { ...valid, [key]: undefined }])
          expect(() => tool.parse(call)).toThrow(`the "${key}" argument is required`)
      }
    })
  }

  test("the refusal says what is wrong and what to do, and names every wrong argument", () => {
    const write = tools.find((tool) => tool.name === "write")!
    expect(() => write.parse({ filePath: "a.txt" })).toThrow(
      'write: the "content" argument is required (The content to write to the file.). Nothing was done; ' +
        "call write again with that argument given as described.",
    )
    expect(() => write.parse({})).toThrow(/"content" argument is required .*; the "filePath" argument is required/)
    // Empty content is a file's content, not a missing argument.
    expect(write.parse({ filePath: "a.txt", content: "" })).toEqual({ filePath: "a.txt", content: "" })
  })

  /** A source that reads a call's arguments by hand (`args.x`, `args[x]`); `args.at(` is an array's. */
  const readsArgs = (source: string) => /\bargs(\.(?!at\()\w|\[)/.test(source)

  test("control: the scan finds a hand-read argument and passes other uses of the name", () => {
    for (const line of ['const c = args.content ?? ""', 'const c = args["content"]', "args[key]"])
      expect(readsArgs(line)).toBe(true)
    for (const line of ["execute: ({ content }) => content", "args.at(-1)", "const { args } = output", "myargs.x"])
      expect(readsArgs(line)).toBe(false)
  })

  test("no tool reads its arguments by hand: only plugin/tool.ts and the guard (built-ins' calls) touch args", () => {
    const sources = [...new Bun.Glob("**/*.ts").scanSync({ cwd: `${import.meta.dir}/../../plugin` })]
    const readers = sources.filter((file) => readsArgs(readFileSync(`${import.meta.dir}/../../plugin/${file}`, "utf8")))
    expect(readers.sort()).toEqual(["guards.ts", "tool.ts"])
  })
})

describe("config.json: the plugin's slice is the zod schema's", () => {
  const refusedBySchema: Array<[string, unknown]> = [
    ["an unknown key in a trusted root", { version: 1, sandboxRuntime: { trustedRoots: [{ root: "/o", bins: [] }] } }],
    ["a relative trusted root", { version: 1, sandboxRuntime: { trustedRoots: [{ root: "opt/rt" }] } }],
    ["an unknown key under sandboxRuntime", { version: 1, sandboxRuntime: { trustedRoot: [] } }],
    ["an unknown top-level key", { version: 1, workspaceRoot: ["/w"] }],
    ["a relative workspace root", { version: 1, workspaceRoots: ["w"] }],
    ["trustedProjectConfig not a list", { version: 1, trustedProjectConfig: "/w" }],
    ["no version", { workspaceRoots: ["/w"] }],
    ["a bad value the plugin does not use", { version: 1, maxParallel: 99 }],
    ["not an object", [1, 2]],
  ]
  test.each(refusedBySchema)("refused by both, with the schema's message: %s", (_, raw) => {
    expect(() => parseConfig(raw, "c.json")).toThrow("c.json is invalid")
    let message = ""
    try {
      parseConfig(raw, "c.json")
    } catch (error) {
      message = (error as Error).message
    }
    expect(() => configSliceOf(raw, "c.json")).toThrow(message)
  })

  const acceptedBySchema: Array<[string, unknown]> = [
    ["the defaults", { version: 1 }],
    [
      "every key the plugin reads, and others",
      {
        version: 1,
        models: { scout: "local/m" },
        sandboxRuntime: { trustedRoots: [{ root: "/opt/rt", pathEntries: ["bin"] }] },
        workspaceRoots: ["/w"],
        trustedProjectConfig: ["/w/p"],
        maxParallel: 2,
      },
    ],
  ]
  test.each(acceptedBySchema)("control: accepted by both, read as the schema parsed it: %s", (_, raw) => {
    const config = parseConfig(raw, "c.json")
    expect(configSliceOf(raw, "c.json")).toEqual({
      trustedRoots: config.sandboxRuntime.trustedRoots,
      policy: { workspaceRoots: config.workspaceRoots, trustedProjectConfig: config.trustedProjectConfig },
    })
  })
})

test("a config error reaches the agent with its fix, as the user's to make; other errors pass as they are", () => {
  let schemaError: unknown
  try {
    configSliceOf({ version: 1, workspaceRoot: [] }, "c.json")
  } catch (error) {
    schemaError = error
  }
  const refusal = configRefusal(schemaError) as AppError
  expect(refusal).toBeInstanceOf(AppError)
  expect(refusal.message).toContain('c.json is invalid:\n  - (top level): unknown field "workspaceRoot"')
  expect(refusal.message).toContain("Edit c.json to fix the field above")
  expect(refusal.message).toContain("not yours\nto change")
  const other = fail("Sandbox", "bwrap is missing")
  expect(configRefusal(other)).toBe(other)
  const plain = new Error("x")
  expect(configRefusal(plain)).toBe(plain)
})
