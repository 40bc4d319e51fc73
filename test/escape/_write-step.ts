// Test entry: patch_apply's write phase alone (no checks before it), request on stdin, for
// apply.test.ts to run inside the same sandbox the real step gets and show the kernel is what holds.
import { writeTargets, type StepRequest } from "../../src/workspace/write-step/apply-step"

const request = JSON.parse(await Bun.stdin.text()) as StepRequest
const answer = await writeTargets(request.workspace, request.run, request.files).then(
  () => ({ ok: true }),
  (error: Error) => ({ ok: false, message: error.message }),
)
process.stdout.write(`${JSON.stringify(answer)}\n`)
