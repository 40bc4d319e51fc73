// read, write, edit, grep, glob and apply_patch, replacing OpenCode's built-ins on the shared
// server only (a plugin tool with a built-in's name replaces it for every agent on that server). Same
// argument names and output format as the built-ins, so models behave the same; every byte read or
// written passes through bwrap (io.ts). Guards (../guards.ts) still refuse by path first, with
// clearer messages; the sandbox is what holds when a path changes between the check and the use.
import { FILES_MARKER } from "../../src/sandbox"
import markerText from "../text/files_marker.md" with { type: "text" }
import { defineTool, type PluginTool } from "../tool"
import { output } from "./access"
import { applyPatchTool, editTool, writeTool } from "./change"
import { globTool, grepTool, readTool } from "./search"
import type { SessionClient } from "../types"

/** Present only with the replacements, denied to every agent: how the MCP side sees they are loaded. */
const markerTool = (): PluginTool =>
  defineTool({ name: FILES_MARKER, description: markerText, args: {}, execute: async () => output("ready", "ready") })

/**
 * `client` reads a writer's scope from its session (plugin/scope.ts); without one no worker writes (fails
 * closed, as sandbox_shell does).
 */
export const fileTools = (client?: SessionClient): PluginTool[] => [
  readTool(),
  writeTool(client),
  editTool(client),
  applyPatchTool(client),
  grepTool(),
  globTool(),
  markerTool(),
]
