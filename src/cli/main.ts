#!/usr/bin/env bun
// Entry point of the binary. The only place that reads process.argv (process.env is read by
// config/flags.ts, from each subcommand through flagsFromProcess); every
// subcommand is loaded lazily so `serve` starts without the installer's code. run.ts checks the
// arguments against the subcommand's definitions before it runs.
import { defineCommand } from "citty"
import { colorFromProcess } from "../config/flags"
import { VERSION } from "../version"
import { APPLY_STEP_ARG } from "../util/self"
import { runCli } from "./run"

export const main = defineCommand({
  meta: {
    name: "opencode-mcp-orchestrator",
    version: VERSION,
    description: "Delegate bounded coding work to OpenCode agents over MCP.",
  },
  subCommands: {
    serve: () => import("./serve").then((m) => m.default),
    demo: () => import("./demo").then((m) => m.default),
    "scripted-model": () => import("./scripted-model").then((m) => m.default),
    install: () => import("./install").then((m) => m.default),
    doctor: () => import("./doctor").then((m) => m.default),
    uninstall: () => import("./uninstall").then((m) => m.default),
    models: () => import("./models").then((m) => m.default),
    tasks: () => import("./tasks").then((m) => m.default),
    stats: () => import("./stats").then((m) => m.default),
    sessions: () => import("./sessions").then((m) => m.default),
    supervise: () => import("./supervise").then((m) => m.default),
    watch: () => import("./watch").then((m) => m.default),
  },
})

if (import.meta.main) {
  // Started by patch_apply inside its sandbox (workspace/apply/apply.ts); not listed among the subcommands.
  if (process.argv[2] === APPLY_STEP_ARG) {
    await import("../workspace/write-step").then((step) => step.stepMain())
    process.exit(0)
  }
  const out = (text: string) => console.log(text)
  const err = (text: string) => console.error(text)
  process.exit(await runCli(main, process.argv.slice(2), { out, err, color: colorFromProcess(), version: VERSION }))
}
