// Doctor is never silent for long: the compiled `doctor` runs with an `opencode` whose `models` takes
// 12 s (what the first OpenCode start after install does while it fetches an npm package), and its
// stdout is read as it arrives. Each check's line appears as that check finishes, and while
// `opencode models` runs a line says so at least every 5 s. Control: the same run read as the report it
// used to be (all lines at the end) fails the same reader.
import { expect, test } from "bun:test"
import { formatReport } from "../../src/doctor/report"
import { runDoctor } from "../../src/doctor/run"
import { run } from "../../src/util/process"
import { BINARY } from "../helpers/mcp"
import { doctorDepsFor, machine } from "../install/helpers"

const SLOW_MS = 12_000
const SILENCE_MS = 5_000

interface Heard {
  at: number
  text: string
}

/** The longest time between the start and the first line, between two lines, or before the exit. */
const longestSilence = (heard: Heard[], started: number, ended: number) => {
  const times = [started, ...heard.map((h) => h.at), ended]
  return Math.max(...times.slice(1).map((t, i) => t - times[i]!))
}

/** An `opencode` that answers like the real one, after SLOW_MS for `models`. */
const slowOpencode = (m: ReturnType<typeof machine>) =>
  m.write(
    `${m.dir}/slow-opencode`,
    `#!/bin/sh\n[ "$1" = models ] && sleep ${SLOW_MS / 1000}\nexec ${m.opencode} "$@"\n`,
    0o755,
  )

test("doctor streams each check's line as it finishes and names what it waits for at least every 5 s", async () => {
  using m = machine()
  m.write(m.paths.configFile, JSON.stringify({ version: 1, models: { scout: "local/m" } }))
  const env = { ...m.env, OPENCODE_MCP_ORCHESTRATOR_OPENCODE: slowOpencode(m) }
  const heard: Heard[] = []
  let pending = ""
  const decoder = new TextDecoder()
  const started = Date.now()
  await run([BINARY, "doctor", "--no-sandbox-probes"], {
    env,
    timeoutMs: 120_000,
    onOutput: (chunk, stream) => {
      if (stream !== "stdout") return
      pending += decoder.decode(chunk)
      const lines = pending.split("\n")
      pending = lines.pop() ?? ""
      for (const text of lines) heard.push({ at: Date.now(), text })
    },
  })
  const ended = Date.now()
  const at = (pattern: RegExp) => heard.find((h) => pattern.test(h.text))?.at ?? Number.NaN
  // The checks before the slow one were shown before it finished, not with the verdict at the end.
  expect(at(/^ok {3}bwrap: /)).toBeLessThan(at(/^(ok {2}|FAIL) model:scout: /) - SLOW_MS / 2)
  const waiting = heard.filter((h) => h.text.includes("waiting for `opencode models`"))
  expect(waiting.length).toBeGreaterThanOrEqual(2)
  // It says what such a wait usually is: OpenCode's own npm install of its plugin package.
  expect(waiting[0]?.text).toContain("@opencode-ai/plugin from npm")
  expect(longestSilence(heard, started, ended)).toBeLessThan(SILENCE_MS)
  expect(heard.at(-1)?.text).toMatch(/^DOCTOR_/)
}, 120_000)

test("control: the same slow doctor printed as one report at the end is silent for longer than 5 s", async () => {
  using m = machine()
  m.write(m.paths.configFile, JSON.stringify({ version: 1, models: { scout: "local/m" } }))
  const started = Date.now()
  const report = await runDoctor(
    { ...doctorDepsFor(m), opencode: slowOpencode(m), env: { ...m.env } },
    { sandboxProbes: false, live: false },
  )
  const at = Date.now()
  const heard = formatReport(report)
    .split("\n")
    .map((text) => ({ at, text }))
  expect(longestSilence(heard, started, at)).toBeGreaterThan(SILENCE_MS)
}, 120_000)
