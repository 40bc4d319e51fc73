import { defineCommand } from "citty"
import { flagsFromProcess } from "../config/flags"
import { Runtime, readCatalog, readServerRecord, stopServer, alive } from "../engine"

export default defineCommand({
  meta: { name: "models", description: "List the models (and their variants) your OpenCode can route to." },
  args: {
    filter: { type: "positional", required: false, description: "Only ids containing this text." },
    json: { type: "boolean", default: false, description: "Print JSON." },
  },
  async run({ args }) {
    const runtime = new Runtime(flagsFromProcess())
    // Reuse the shared server when one runs; one started only for this listing is stopped again.
    const running = await readServerRecord(runtime.paths)
    const shared = running !== undefined && alive(running.pid)
    try {
      const { client } = await runtime.opencode()
      const models = (await readCatalog(client)).models.filter((m) => !args.filter || m.id.includes(args.filter))
      if (args.json) console.log(JSON.stringify(models, null, 2))
      else
        for (const m of models)
          console.log(`${m.id}${m.variants.length ? `  (variants: ${m.variants.join(", ")})` : ""}`)
    } finally {
      runtime.close()
      if (!shared) await stopServer(runtime.paths)
    }
  },
})
