// Compiles the one binary for linux-x64 and linux-arm64 into dist/. The tools/list answer (dist/tools-list.json)
// and the plugin (dist/plugin.txt) are written first because the binary embeds them.
//   bun scripts/build.ts [--version X] [--host-only]
import { parseArgs } from "node:util"
import pkg from "../package.json"
import { run } from "../src/util/process"

const root = `${import.meta.dir}/..`
const { values } = parseArgs({ options: { version: { type: "string" }, "host-only": { type: "boolean" } } })
const version = values.version ?? pkg.version
const hostArch = process.arch === "arm64" ? "arm64" : "x64"
const targets = values["host-only"] ? [hostArch] : ["x64", "arm64"]

async function step(argv: string[]) {
  const result = await run(argv, { cwd: root })
  if (result.code !== 0) {
    process.stderr.write(result.stdout + result.stderr)
    process.exit(1)
  }
}

// The list `serve` answers tools/list with (src/mcp/server.ts), written from the tools themselves.
await step(["bun", "scripts/tools-list.ts"])
await step(["bun", "scripts/build-plugin.ts"])
for (const arch of targets) {
  const out = `dist/opencode-mcp-orchestrator-linux-${arch}`
  await step([
    // Bytecode and minification: a parent client starts this server at the start of every session,
    // and they take about 40 % off start → tools/list (scripts/bench.ts measures it against a plain build).
    "bun",
    "build",
    "src/cli/main.ts",
    // The worker that checks answers against an output_schema off the request loop: an entry point of
    // its own, embedded as ./engine/outcome/output-check-worker.ts (src/engine/outcome/output-check.ts starts
    // it by that name).
    "src/engine/outcome/output-check-worker.ts",
    "--compile",
    "--bytecode",
    "--format=esm",
    "--minify",
    `--target=bun-linux-${arch}`,
    `--define`,
    `BUILD_VERSION=${JSON.stringify(version)}`,
    "--outfile",
    out,
  ])
  console.log(`built ${out} (${version})`)
}
// The host binary under its plain name, for tests, the demo and the README. Copied beside it and
// renamed over it, because a running copy of the old binary makes a plain cp fail ("Text file busy").
await step(["cp", `dist/opencode-mcp-orchestrator-linux-${hostArch}`, "dist/.opencode-mcp-orchestrator.new"])
await step(["mv", "-f", "dist/.opencode-mcp-orchestrator.new", "dist/opencode-mcp-orchestrator"])
