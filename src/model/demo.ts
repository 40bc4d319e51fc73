// The demo: a small git repository, the scripted model, an isolated OpenCode home with the rendered
// agents and plugin, and a real `scout` call sent to this program's MCP server over stdio.
// Everything started here is stopped here.
import { mkdtemp, rm } from "node:fs/promises"
import { tmpdir } from "node:os"
import { searchPath, type Env } from "../config/flags"
import { fail } from "../errors"
import { stopServer, resolveBinary } from "../opencode/server"
import { run } from "../util/process"
import { selfCommand } from "../util/self"
import { createIsolatedHome } from "./home"
import { startScriptedModel } from "./server"
import { connectStdio } from "./stdio-client"

export const DEMO_TASK = "Find the TODO markers in this repository and summarize what README.md says the project is."

/** A new git repository in a temp dir holding these files in one commit (git from /usr/bin, no user config). */
export async function createRepository(
  prefix: string,
  files: Record<string, string>,
  parent = tmpdir(),
): Promise<string> {
  const dir = await mkdtemp(`${parent}/${prefix}`)
  for (const [path, content] of Object.entries(files)) await Bun.write(`${dir}/${path}`, content)
  const git = (...args: string[]) =>
    run(["git", ...args], { cwd: dir, env: { PATH: "/usr/bin:/bin", HOME: dir, GIT_CONFIG_NOSYSTEM: "1" } })
  await git("init", "-q")
  await git("add", ".")
  await git("-c", "user.name=demo", "-c", "user.email=demo@localhost", "commit", "-qm", "initial")
  return dir
}

export const createDemoRepository = (parent = tmpdir()) =>
  createRepository(
    "oc-orch-demo-",
    {
      "README.md": "# tally\n\nA tiny counter library: `count(words)` returns how often each word occurs.\n",
      "src/tally.ts":
        "// TODO: ignore case when counting\nexport function count(words: string[]) {\n  const seen = new " +
        "Map<string, number>()\n  for (const word of words) seen.set(word, (seen.get(word) ?? 0) + 1)\n  return " +
        "seen\n}\n",
    },
    parent,
  )

export interface DemoOptions {
  env: Env
  keep?: boolean
  log?: (line: string) => void
}

export interface DemoOutcome {
  status: string
  text: string
  structured?: Record<string, unknown>
}

export async function runDemo(options: DemoOptions): Promise<DemoOutcome> {
  const log = options.log ?? (() => {})
  resolveBinary("opencode", options.env)
  // Each piece is stopped or removed in reverse, whichever step fails.
  const cleanup: Array<() => Promise<unknown>> = []
  try {
    const model = await startScriptedModel()
    cleanup.push(() => model.stop())
    const home = await createIsolatedHome({ modelUrl: model.url, env: { PATH: searchPath(options.env) } })
    if (!options.keep) cleanup.push(() => home.dispose())
    cleanup.push(() => stopServer(home.paths))
    const repo = await createDemoRepository()
    if (!options.keep) cleanup.push(() => rm(repo, { recursive: true, force: true }))
    log(`demo: repository ${repo}, scripted model ${model.url}, OpenCode home ${home.root}`)
    const [command, ...args] = selfCommand()
    const { client, close } = await connectStdio([command!, ...args, "serve"], home.env, {
      clientName: "opencode-mcp-orchestrator-demo",
      stderr: "inherit",
    })
    cleanup.push(close)
    log("demo: MCP server ready; calling scout")
    const result = await client.callTool(
      { name: "scout", arguments: { cwd: repo, task: DEMO_TASK } },
      {
        onprogress: (p) => log(`  progress: ${p.message ?? p.progress}`),
        timeout: 120_000,
      },
    )
    const text = (result.content as { type: string; text?: string }[]).map((c) => c.text ?? "").join("\n")
    const structured = result.structuredContent as Record<string, unknown> | undefined
    if (!structured) throw fail("Delegation", `The scout call returned no structured result:\n${text}`)
    return { status: String(structured.status), text, structured }
  } finally {
    // Every cleanup step runs even if one fails; the demo's own outcome is what is reported.
    for (const step of cleanup.reverse()) await step().catch(() => undefined)
  }
}
