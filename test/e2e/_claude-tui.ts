// The real Claude Code, interactive, in a real terminal (tmux), offline on the scripted Anthropic API,
// with the compiled binary as its MCP server behind a logging `tee`. Interactive because only the `cli`
// entrypoint declares the MCP tasks extension; print mode never does (README "Native MCP tasks").
import { expect } from "bun:test"
import { mkdir, readdir, readFile, rm } from "node:fs/promises"
import type { IsolatedHome } from "../../src/model/home"
import type { ScriptedModel } from "../../src/model/server"
import { writeJson } from "../../src/util/fs"
import { BINARY, ROOT } from "../helpers/mcp"
import { until } from "../helpers/until"
import { startTerminal, type Terminal } from "./_tmux"
import { loggedLines, loggedServe } from "./_wire"

const CLAUDE = `${ROOT}/node_modules/.bin/claude`
/** The key's last 20 characters, approved in the config, so no "use this API key?" dialog opens. */
const KEY = "sk-scripted-native-tasks-0123456789"

export interface WireMessage {
  id?: number | string
  method?: string
  params?: { _meta?: Record<string, unknown>; name?: string; task?: unknown; taskId?: string }
}

export interface ClaudeTui extends Pick<Terminal, "say" | "press" | "screen"> {
  /** What Claude Code sent our server, in order. */
  sent(): Promise<WireMessage[]>
  /** The PIDs of our `serve` processes Claude Code runs now (its descendants). */
  servers(): Promise<number[]>
  stop(): Promise<void>
}

/** Starts `claude` in `cwd` with our server as `orch`; `env` reaches Claude Code, `serveEnv` the server. */
export async function startClaudeTui(options: {
  home: IsolatedHome
  model: ScriptedModel
  cwd: string
  name: string
  env?: Record<string, string>
  serveEnv?: Record<string, string>
  allowedTools: string[]
}): Promise<ClaudeTui> {
  const { home, model, cwd, name } = options
  const dir = `${home.root}/${name}`
  await mkdir(`${dir}/claude`, { recursive: true })
  const wire = `${dir}/wire.jsonl`
  const logged = await loggedServe(`${dir}/logged-serve.sh`, { sent: wire })
  const serveEnv = { ...(home.env as Record<string, string>), ...options.serveEnv }
  await writeJson(`${dir}/mcp.json`, {
    mcpServers: { orch: { type: "stdio", command: logged, args: [], env: serveEnv } },
  })
  // A configured first start: onboarding done, the folder trusted, the key approved.
  await writeJson(`${dir}/claude/.claude.json`, {
    hasCompletedOnboarding: true,
    theme: "dark",
    numStartups: 3,
    customApiKeyResponses: { approved: [KEY.slice(-20)], rejected: [] },
    projects: { [cwd]: { hasTrustDialogAccepted: true, hasCompletedProjectOnboarding: true, allowedTools: [] } },
  })
  const env: Record<string, string> = {
    ...(home.env as Record<string, string>),
    TERM: "xterm-256color",
    CLAUDE_CONFIG_DIR: `${dir}/claude`,
    ANTHROPIC_BASE_URL: model.origin,
    ANTHROPIC_API_KEY: KEY,
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
    ENABLE_TOOL_SEARCH: "false",
    ...options.env,
  }
  const argv = [CLAUDE, "--model", "fast", "--mcp-config", `${dir}/mcp.json`, "--strict-mcp-config"]
  const terminal = await startTerminal({
    name,
    cwd,
    argv: [...argv, "--allowedTools", options.allowedTools.join(",")],
    env,
    stderr: `${dir}/stderr.txt`,
  })
  const { screen } = terminal
  // The prompt box is drawn once the MCP servers are connected and the session is ready for input.
  const sent = () => loggedLines<WireMessage>(wire)
  await until(
    async () => (await sent()).some((m) => m.method === "tools/list") && (await screen()).includes("❯"),
    60_000,
  )
  return {
    say: terminal.say,
    press: terminal.press,
    screen,
    sent,
    servers: async () => serveProcesses(await terminal.pid()),
    async stop() {
      await terminal.stop()
      await rm(`${dir}/claude`, { recursive: true, force: true })
    },
  }
}

/** Our `serve` processes among the descendants of `root`, read from /proc. */
async function serveProcesses(root: number): Promise<number[]> {
  const parents = new Map<number, number>()
  const commands = new Map<number, string[]>()
  for (const name of await readdir("/proc")) {
    const pid = Number(name)
    if (!Number.isInteger(pid)) continue
    const stat = await readFile(`/proc/${pid}/stat`, "utf8").catch(() => "")
    const cmdline = await readFile(`/proc/${pid}/cmdline`, "utf8").catch(() => "")
    // The command name in stat is parenthesised and may hold spaces: the fields after it are fixed.
    const ppid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1])
    if (Number.isInteger(ppid)) parents.set(pid, ppid)
    commands.set(pid, cmdline.split("\0"))
  }
  const descends = (pid: number): boolean => {
    for (let at = parents.get(pid); at !== undefined && at > 1; at = parents.get(at)) if (at === root) return true
    return false
  }
  return [...commands]
    .filter(([pid, argv]) => argv[0] === BINARY && argv[1] === "serve" && descends(pid))
    .map(([pid]) => pid)
}

/** The dialog Claude Code opens for a form from an MCP server. */
export const DIALOG = "MCP server “orch” requests your input"

/** Whether the screen shows `text` now. */
export const shows = async (tui: Pick<ClaudeTui, "screen">, text: string) => (await tui.screen()).includes(text)

/**
 * In the open dialog of the question test/helpers/question.ts asks: its field opened (→) and its first option
 * picked (Enter), after which the dialog's focus moves to Accept.
 */
export async function pickFirstOption(tui: ClaudeTui): Promise<void> {
  await tui.press("Right")
  expect(await until(() => shows(tui, "◯ tally"), 10_000)).toBe(true)
  await tui.press("Enter")
  expect(await until(() => shows(tui, "✔ Name: countWords"), 10_000)).toBe(true)
}

/**
 * Enter on the focused button until the dialog closes: the first Enter after a pick is taken by the closing
 * option list, so the dialog may need a second one.
 */
export async function submitDialog(tui: ClaudeTui): Promise<void> {
  for (let presses = 0; presses < 3 && (await shows(tui, DIALOG)); presses++) {
    await tui.press("Enter")
    await until(async () => !(await shows(tui, DIALOG)), 3000)
  }
  expect(await shows(tui, DIALOG)).toBe(false)
}
