// What a role may be called and the profiles it may have, with nothing else in the module: `serve` lists
// the person's roles in its instructions before any zod schema loads (src/roles/instructions.ts), so
// nothing here imports zod.

/** A name a parent types, and a file name a Claude Code subagent may have. */
export const ROLE_NAME = /^[a-z][a-z0-9-]{0,39}$/

/** The names a role may not take: the built-in roles and tools. */
export const RESERVED_ROLE_NAMES = ["scout", "worker", "runner", "reviewer", "review"] as const

/** The sandbox profiles a role runs under: read-only as a scout, write as a worker. */
export const ROLE_PROFILES = ["read-only", "write"] as const
export type RoleProfile = (typeof ROLE_PROFILES)[number]

/** The tool that runs a role of each profile. */
export const PROFILE_TOOL = { "read-only": "scout", write: "worker" } as const
