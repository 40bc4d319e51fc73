// `uninstall`: removes this project's registrations and the files it wrote that are still as it
// wrote them; keeps config.json unless --purge-config.
import { defineCommand } from "citty"
import { flagsFromProcess } from "../config/flags"
import { resolvePaths } from "../config/paths"
import { clientHomes } from "../install/homes"
import { uninstall } from "../install/uninstall"
import { run } from "../util/process"

export default defineCommand({
  meta: { name: "uninstall", description: "Remove the installation; files you modified and config.json are kept." },
  args: {
    "purge-config": { type: "boolean", default: false, description: "Also remove config.json." },
    "dry-run": { type: "boolean", default: false, description: "Print what would be removed and change nothing." },
  },
  async run({ args }) {
    const flags = flagsFromProcess()
    process.exitCode = await uninstall(
      {
        paths: resolvePaths(flags),
        homes: clientHomes(flags),
        env: flags.env,
        run,
        print: (line) => console.log(line),
      },
      { purgeConfig: args["purge-config"], dryRun: args["dry-run"] },
    )
  },
})
