#!/usr/bin/env bun
// Entry point of the binary. The only place that reads process.argv (process.env is read by
// config/flags.ts, from each subcommand through flagsFromProcess); every
// subcommand is loaded lazily so `serve` starts without the installer's code.
import { defineCommand, runCommand, showUsage } from "citty"
import { describe } from "../errors"
import { exitCodeOf } from "./exit"
import { VERSION } from "../version"
import { APPLY_STEP_ARG } from "../util/self"

export const main = defineCommand({
  meta: { name: "opencode-mcp-orchestrator", version: VERSION, description: "Delegate bounded coding work to OpenCode agents over MCP." },
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
  },
})

async function entry(argv: string[]) {
  // Started by patch_apply inside its sandbox (workspace/apply.ts); not listed among the subcommands.
  if (argv[0] === APPLY_STEP_ARG) {
    await import("../workspace/apply-step").then((step) => step.stepMain())
    return 0
  }
  if (argv[0] === "--version" || argv[0] === "-v") {
    console.log(VERSION)
    return 0
  }
  if (argv.length === 0 || argv[0] === "--help" || argv[0] === "-h") {
    await showUsage(main)
    return 0
  }
  try {
    await runCommand(main, { rawArgs: argv })
    return typeof process.exitCode === "number" ? process.exitCode : 0
  } catch (error) {
    console.error(`error: ${describe(error)}`)
    return exitCodeOf(error)
  }
}

if (import.meta.main) process.exit(await entry(process.argv.slice(2)))
