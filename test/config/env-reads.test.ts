// The environment is read in one place: src/config/flags.ts for the program, plugin/env.ts for the
// plugin (which goes through the same readFlags). Everything else receives Flags. This test holds the
// source to that, and first shows that its matcher finds what it is looking for.
import { describe, expect, test } from "bun:test"

const ROOT = `${import.meta.dir}/../..`
const ALLOWED = new Set(["src/config/flags.ts", "plugin/env.ts"])

const READS: [string, RegExp][] = [
  ["process.env", /\bprocess\.env\b/],
  ["Bun.env", /\bBun\.env\b/],
  ["import.meta.env", /\bimport\.meta\.env\b/],
  // `env.HOME`, `options.env?.PATH`, `flags.env.TMPDIR`
  ["a variable read by name", /\b\w*(?:env|Env|environment)\??\.[A-Z][A-Z0-9_]*\b/],
  // `env["HOME"]`, `env[name]`, `env?.[spec.variable]`, but not a write: `env[name] = value`
  ["a variable read by index", /\b\w*(?:env|Env|environment)(?:\?\.)?\[[^\]]*\](?!\s*=(?!=))/],
  // `const { HOME, PATH } = env`
  ["a variable destructured", /\b(?:const|let|var)\s*\{[^}]*\}\s*=\s*[\w.]*(?:env|Env)\b/],
]

/** Code without comments: a comment may say `process.env`; only code may read it. */
const code = (source: string) => source.replace(/\/\*[\s\S]*?\*\//g, "").replace(/(^|[^:"'`\\])\/\/.*$/gm, "$1")

export function envReads(source: string): string[] {
  return code(source)
    .split("\n")
    .flatMap((line) => READS.filter(([, pattern]) => pattern.test(line)).map(([what]) => `${what}: ${line.trim()}`))
}

describe("the matcher", () => {
  const planted: [string, string][] = [
    ["const home = process.env.HOME", "process.env"],
    ["run(cmd, { env: process.env })", "process.env"],
    ["const token = Bun.env.TOKEN", "Bun.env"],
    ["if (import.meta.env.DEV) log()", "import.meta.env"],
    ["const dirs = env.OPENCODE_SANDBOX_TOOLCHAIN_DIRS", "a variable read by name"],
    ['Bun.which(name, { PATH: options.env?.PATH ?? "" })', "a variable read by name"],
    ["const tmp = flags.env.TMPDIR", "a variable read by name"],
    ['const home = env["HOME"]', "a variable read by index"],
    ["out[key] = parse(spec, env[spec.variable])", "a variable read by index"],
    ['const shared = env?.[SHARED_SERVER_VARIABLE] === "1"', "a variable read by index"],
    ["const { HOME, PATH } = ctx.env", "a variable destructured"],
  ]
  for (const [line, what] of planted)
    test(`finds ${what} in \`${line}\``, () =>
      expect(envReads(line).map((found) => found.split(":")[0])).toContain(what))

  const innocent = [
    "// the CLI reads process.env once",
    "/* process.env.HOME */ const x = 1",
    "env[name] = insideRoot(root, value)",
    "const child = { ...env, HOME: root }",
    "spawn(argv, { env: flags.env })",
    'fetch("https://example.com/x") // falls back to env.HOME',
  ]
  for (const line of innocent) test(`lets \`${line}\` be`, () => expect(envReads(line)).toEqual([]))
})

describe("src/ and plugin/", () => {
  const files = ["src", "plugin"].flatMap((dir) => [...new Bun.Glob(`${dir}/**/*.ts`).scanSync({ cwd: ROOT })]).sort()

  test("hold the files this test means to scan", () => {
    expect(files).toContain("src/cli/main.ts")
    expect(files).toContain("src/sandbox/plan.ts")
    expect(files).toContain("plugin/index.ts")
    for (const allowed of ALLOWED) expect(files).toContain(allowed)
  })

  test("read the environment only in the config reader and the plugin's reader", async () => {
    const outside: string[] = []
    for (const file of files) {
      if (ALLOWED.has(file)) continue
      for (const read of envReads(await Bun.file(`${ROOT}/${file}`).text())) outside.push(`${file}: ${read}`)
    }
    expect(outside).toEqual([])
  })

  test("the allowed readers do read it (else this test would guard nothing)", async () => {
    for (const file of ALLOWED) expect(envReads(await Bun.file(`${ROOT}/${file}`).text()).length).toBeGreaterThan(0)
  })
})
