// The worker that checks a final answer against an output_schema (output-check.ts starts one per check
// and terminates it when the check overruns its budget). It says when it starts, so the request loop,
// and the tests that watch it, know the check is under way off the loop.
import { checkAnswer, type OutputSchema } from "./model-json"

declare const self: Worker

self.onmessage = (event: MessageEvent<{ schema: OutputSchema; text: string }>) => {
  self.postMessage({ kind: "started" })
  self.postMessage({ kind: "checked", check: checkAnswer(event.data.schema, event.data.text) })
}
