// `scripted-model`: serves the scripted OpenAI-compatible model (and the same scripts as an Anthropic
// Messages API under /v1/messages) until SIGTERM or SIGINT. The first line on stdout is the base URL
// to configure as the provider's baseURL; nothing else goes to stdout.
import { defineCommand } from "citty"
import { fail } from "../errors"
import { DEFAULT_SCRIPT, parseScriptFile } from "../model/script"
import { startScriptedModel } from "../model/server"

export default defineCommand({
  meta: {
    name: "scripted-model",
    description: "Serve the scripted OpenAI-compatible model on loopback (demo, tests, doctor).",
  },
  args: {
    port: { type: "string", description: "Port to listen on (default: a free one).", default: "0" },
    host: { type: "string", description: "Address to bind.", default: "127.0.0.1" },
    script: { type: "string", description: 'JSON script file: one script, or {"scripts": {NAME: script}}.' },
    default: {
      type: "string",
      description: `Script played when a request names none with [script:NAME] (default: ${DEFAULT_SCRIPT}).`,
    },
  },
  async run({ args }) {
    const port = Number(args.port)
    if (!Number.isInteger(port) || port < 0 || port > 65535)
      throw fail("Usage", `--port ${args.port} is not a port number.`, "Pass 0 to 65535.")
    let scripts = {}
    if (args.script) {
      const file = Bun.file(args.script)
      if (!(await file.exists()))
        throw fail("Usage", `script file ${args.script} does not exist.`, "Pass the path of a JSON script.")
      scripts = parseScriptFile(await file.text(), args.script)
    }
    const names = Object.keys(scripts)
    const defaultScript = args.default ?? (names.length === 1 ? names[0] : undefined)
    const model = await startScriptedModel({ scripts, port, host: args.host, defaultScript })
    console.log(model.url)
    console.error(
      `scripted model serving ${names.length > 0 ? names.join(", ") : DEFAULT_SCRIPT} (default ` +
        `${defaultScript ?? DEFAULT_SCRIPT}); stop with SIGTERM`,
    )
    await new Promise<void>((resolve) => {
      process.once("SIGTERM", resolve)
      process.once("SIGINT", resolve)
    })
    await model.stop()
  },
})
