// The OpenCode plugin: sandbox tools and guards for orchestrator agents. Bundled into one file at
// build time (scripts/build-plugin.ts) and embedded in the binary.
import type { Plugin } from "./types"

export const OrchestratorPlugin: Plugin = async () => ({})

export default OrchestratorPlugin
