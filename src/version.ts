import pkg from "../package.json"

declare const BUILD_VERSION: string | undefined

/** Baked in by scripts/build.ts (`--define BUILD_VERSION=…`); package.json's version when run from source. */
export const VERSION: string = typeof BUILD_VERSION === "string" ? BUILD_VERSION : pkg.version

/** MCP registration name, kept from the system this one replaces so existing prompts work. */
export const SERVER_NAME = "opencode-agents"
