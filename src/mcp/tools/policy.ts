// The policy tool: the same gathering the delegating tools do before they start (src/engine/admission/policy.ts
// policyReport), shown instead of enforced, so a parent can see why a call would be refused before making it.
import { z } from "zod"
import { describeSource, MODE_SOURCES, MODES, TIERS } from "../../engine/terms"
import { defineTool } from "../define"
import { policyArgs } from "../shared"
import description from "./policy.md" with { type: "text" }

const statement = z.object({ source: z.enum(MODE_SOURCES), mode: z.enum(MODES), where: z.string() })

export const policy = defineTool({
  name: "policy",
  title: "Delegation policy for a workspace",
  description,
  input: {
    cwd: z.string().min(1),
    mode: policyArgs.mode.describe("A mode you would pass."),
    release_missing_markers: z
      .boolean()
      .optional()
      .describe("Forget gone markers (missing_markers): only if the person removed them."),
  },
  output: {
    project_root: z
      .string()
      .describe(
        "The outermost ancestor of cwd below HOME holding a .git, else cwd. " +
          "Markers count in cwd and every ancestor below HOME.",
      ),
    mode: z.enum(MODES),
    source: z.string().describe("Where the mode came from."),
    statements: z.array(statement).describe("Every place that states a mode, in the order they are read."),
    overruled: z.array(statement).describe("Statements that lost (sensitive stated anywhere wins)."),
    allowed: z.object({ scout: z.string(), worker: z.string(), runner: z.string() }),
    tiers: z.object({ required: z.boolean(), delegated: z.array(z.enum(TIERS)), refused: z.array(z.enum(TIERS)) }),
    secret_guard: z.string(),
    roles: z
      .array(
        z.object({
          name: z.string(),
          tool: z.enum(["scout", "worker"]).optional(),
          description: z.string(),
          source: z.string(),
          allowed: z.string(),
          notes: z.array(z.string()).optional(),
        }),
      )
      .describe("Roles the person defined: pass the name as role to its tool."),
    missing_markers: z
      .array(z.object({ path: z.string(), why: z.string() }))
      .optional()
      .describe(
        "Sensitive markers seen here before and gone now (or a directory whose memory could not be read): still " +
          "obeyed until released with release_missing_markers.",
      ),
  },
  // Not read-only: release_missing_markers forgets what the product remembers of a directory's markers.
  annotations: { readOnlyHint: false, destructiveHint: false, openWorldHint: false },
  run: async (args, { delegations }) => {
    const report = await delegations.policy(args.cwd, {
      mode: args.mode,
      release: args.release_missing_markers === true,
    })
    const { resolved, allowed, tiers, source } = report
    const lines = [
      `mode: ${resolved.mode} (${source})`,
      `project root: ${report.projectRoot}`,
      ...resolved.overruled.map((s) => `overruled: ${s.mode} from ${describeSource(s)}`),
      ...report.missingMarkers.map((m) => `missing marker, still obeyed: ${m.path} (${m.why})`),
      `scout: ${allowed.scout}`,
      `worker: ${allowed.worker}`,
      `runner: ${allowed.runner}`,
      `tier: ${tiers.required ? "required" : "optional"}; ${tiers.delegated.join(" and ")} are delegated, ` +
        `${tiers.refused.join(" and ")} are refused (do that work yourself)`,
      `secret guard: ${report.secretGuard}`,
      ...report.roles.map((role) =>
        role.tool
          ? `role ${role.name} (${role.tool}, ${role.allowed}): ${role.description}`
          : `role ${role.name}: ${role.allowed} (${role.source})`,
      ),
    ]
    return {
      text: lines.join("\n"),
      structured: {
        project_root: report.projectRoot,
        mode: resolved.mode,
        source,
        statements: resolved.statements,
        overruled: resolved.overruled,
        allowed,
        tiers,
        secret_guard: report.secretGuard,
        roles: report.roles,
        ...(report.missingMarkers.length ? { missing_markers: report.missingMarkers } : {}),
      },
    }
  },
})
