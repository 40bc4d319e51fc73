// A process restarting the shared server (recycle.ts) that stops at one step of the restart, named by
// its first argument, and waits there to be SIGKILLed: it prints `at <step>` once there. The limits
// are ones every server is over, and the tasks are taken to rest, so only the step decides.
import { readFlags } from "../../src/config/flags"
import { resolvePaths } from "../../src/config/paths"
import { InstanceMarks } from "../../src/engine/capacity/instance-marks"
import { type RecycleStep, recycleIfRested } from "../../src/engine/capacity/recycle"
import { connect } from "../../src/opencode/client"
import { readServerRecord, stopServerIfRecorded } from "../../src/opencode/server"

const target = process.argv[2]
const paths = resolvePaths(readFlags(process.env))
const record = await readServerRecord(paths)
if (!record) {
  process.stdout.write("no server\n")
  process.exit(2)
}
const client = connect(record, { standIns: paths.opencodeDirsDir })
const step = async (name: RecycleStep) => {
  if (name !== target) return
  process.stdout.write(`at ${name}\n`)
  // Held here until the test kills this process.
  await new Promise(() => undefined)
}
const outcome = await recycleIfRested({
  connection: () => ({ record, client }),
  limits: async () => ({ recycleMb: 1, restMs: 0 }),
  marks: new InstanceMarks(paths.instancesDir),
  tasksRest: async () => true,
  stop: (stopped, at) => stopServerIfRecorded(paths, stopped, { step: at }),
  step,
})
process.stdout.write(`done ${outcome}\n`)
