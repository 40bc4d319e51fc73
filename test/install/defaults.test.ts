// A non-interactive install says which roles stay on OpenCode's default model and how to choose,
// rather than leaving every delegation on it silently. Real OpenCode model catalog, dry runs.
import { expect, test } from "bun:test"
import { installYes, machine } from "./helpers"

const notes = (lines: string[]) => lines.filter((line) => line.startsWith("Model: "))

test("install --yes with no models: one line per role, naming the flag that chooses it", async () => {
  using m = machine()
  const { code, lines } = await installYes(m, { integrations: "none", dryRun: true })
  expect(code).toBe(0)
  const how = "(`opencode-mcp-orchestrator models` lists them) or run `install` on a terminal."
  const expected = ["scout", "worker", "runner"].map(
    (role) =>
      `Model: ${role} stays on OpenCode's default model; choose one with --models ${role}=PROVIDER/MODEL ${how}`,
  )
  expect(notes(lines)).toEqual(expected)
}, 120_000)

test("only the roles left out are named", async () => {
  using m = machine()
  const { lines } = await installYes(m, { integrations: "none", dryRun: true, models: "scout=local/m,worker=local/n" })
  expect(notes(lines)).toHaveLength(1)
  expect(notes(lines)[0]).toStartWith("Model: runner stays on OpenCode's default model")
}, 120_000)

test("control: every role chosen (by flag, or kept from config.json) prints no such line", async () => {
  using m = machine()
  expect(notes((await installYes(m, { integrations: "none", dryRun: true, models: "local/m" })).lines)).toEqual([])
  m.write(
    m.paths.configFile,
    JSON.stringify({ version: 1, models: { scout: "local/m", worker: "local/m", runner: "local/n" } }),
  )
  expect(notes((await installYes(m, { integrations: "none", dryRun: true })).lines)).toEqual([])
}, 120_000)
