// Doctor is never silent for long: the compiled `doctor` runs with an `opencode` whose `models` is held
// until the test lets it go (what the first OpenCode start after install does for seconds while it
// fetches an npm package), and its stdout is read as it arrives. Each check's line appears as that check
// finishes, and while `opencode models` runs a line says so every PROGRESS_EVERY_MS (under the 5 s a
// person should wait without a word). Control: the same run read as the report it used to be (all lines
// at the end) says nothing while `models` is held.
import { existsSync } from "node:fs"
import { expect, test } from "bun:test"
import { formatReport } from "../../src/doctor/report"
import { runDoctor } from "../../src/doctor/run"
import { PROGRESS_EVERY_MS } from "../../src/doctor/stream"
import { run } from "../../src/util/process"
import { BINARY } from "../helpers/mcp"
import { until } from "../helpers/until"
import { doctorDepsFor, machine } from "../install/helpers"

/** An `opencode` that answers like the real one, except that `models` waits for the gate file. */
const heldOpencode = (m: ReturnType<typeof machine>) => {
  const held = { gate: `${m.dir}/gate`, started: `${m.dir}/models-started` }
  const path = m.write(
    `${m.dir}/held-opencode`,
    `#!/bin/sh\nif [ "$1" = models ]; then touch '${held.started}'; while [ ! -e '${held.gate}' ]; do sleep 0.1; done; fi\nexec ${m.opencode} "$@"\n`,
    0o755,
  )
  return { ...held, path }
}

test("doctor streams each check's line as it finishes and names what it waits for while it waits", async () => {
  using m = machine()
  m.write(m.paths.configFile, JSON.stringify({ version: 1, models: { scout: "local/m" } }))
  const opencode = heldOpencode(m)
  const env = { ...m.env, OPENCODE_MCP_ORCHESTRATOR_OPENCODE: opencode.path }
  const heard: string[] = []
  let pending = ""
  const decoder = new TextDecoder()
  const doctor = run([BINARY, "doctor", "--no-sandbox-probes"], {
    env,
    timeoutMs: 120_000,
    onOutput: (chunk, stream) => {
      if (stream !== "stdout") return
      pending += decoder.decode(chunk)
      const lines = pending.split("\n")
      pending = lines.pop() ?? ""
      heard.push(...lines)
    },
  })
  const waiting = () => heard.filter((text) => text.includes("waiting for `opencode models`"))
  // While `models` is held: the checks before it have been shown, and the wait is named more than once.
  expect(await until(() => waiting().length >= 2, 60_000)).toBe(true)
  const whileHeld = [...heard]
  await Bun.write(opencode.gate, "")
  await doctor
  expect(whileHeld.some((text) => /^ok {3}bwrap: /.test(text))).toBe(true)
  expect(whileHeld.some((text) => /^(ok {2}|FAIL) model:scout: /.test(text))).toBe(false)
  // It says what such a wait usually is: OpenCode's own npm install of its plugin package.
  expect(waiting()[0]).toContain("@opencode-ai/plugin from npm")
  expect(heard.some((text) => /^(ok {2}|FAIL) model:scout: /.test(text))).toBe(true)
  expect(heard.at(-1)).toMatch(/^DOCTOR_/)
  expect(PROGRESS_EVERY_MS).toBeLessThan(5000)
}, 120_000)

test("control: the same held doctor printed as one report at the end says nothing while it waits", async () => {
  using m = machine()
  m.write(m.paths.configFile, JSON.stringify({ version: 1, models: { scout: "local/m" } }))
  const opencode = heldOpencode(m)
  const heard: string[] = []
  const report = runDoctor(
    { ...doctorDepsFor(m), opencode: opencode.path, env: { ...m.env } },
    { sandboxProbes: false, live: false },
  ).then((done) => heard.push(...formatReport(done).split("\n")))
  expect(await until(() => existsSync(opencode.started), 60_000)).toBe(true)
  const whileHeld = [...heard]
  await Bun.write(opencode.gate, "")
  await report
  expect(whileHeld).toEqual([])
  expect(heard.some((text) => /^ok {3}bwrap: /.test(text))).toBe(true)
}, 120_000)
