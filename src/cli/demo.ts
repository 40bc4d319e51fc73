import { defineCommand } from "citty"
import { flagsFromProcess } from "../config/flags"
import { runDemo } from "../model/demo"

export default defineCommand({
  meta: {
    name: "demo",
    description: "Run a real scout delegation on the embedded scripted model (no account, no network).",
  },
  args: {
    keep: { type: "boolean", description: "Keep the temporary repository and home for inspection." },
  },
  async run({ args }) {
    const flags = flagsFromProcess()
    const outcome = await runDemo({ env: flags.env, keep: args.keep, log: (line) => console.error(line) })
    console.log(outcome.text)
    if (outcome.status !== "succeeded") process.exitCode = 1
  },
})
