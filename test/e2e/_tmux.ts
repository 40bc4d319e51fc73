// A program in a real terminal: a detached tmux session on its own socket, 160×50, typed into and read back
// as a person would. The interactive client tests (Claude Code, Codex) drive their TUIs through it.
import { run } from "../../src/util/process"

export interface Terminal {
  /** Types `text` and presses Enter. */
  say(text: string): Promise<void>
  /** Presses one key (tmux's name for it: Enter, Down, Escape, …). */
  press(key: string): Promise<void>
  /** What the terminal shows now. */
  screen(): Promise<string>
  /** The PID of the program the terminal runs. */
  pid(): Promise<number>
  /** Stops the terminal and what runs in it. */
  stop(): Promise<void>
}

/** Quoted for `sh`. */
const shellQuoted = (value: string) => `'${value.replaceAll("'", "'\\''")}'`

/** Runs `argv` in `cwd` under tmux with exactly `env` (nothing inherited), its stderr to `stderr`. */
export async function startTerminal(options: {
  name: string
  cwd: string
  argv: string[]
  env: Record<string, string>
  stderr: string
}): Promise<Terminal> {
  const { cwd, argv, env } = options
  const assignments = Object.entries(env).map(([key, value]) => `${key}=${shellQuoted(value)}`)
  const command =
    `cd ${shellQuoted(cwd)} && exec env -i ${assignments.join(" ")} ${argv.map(shellQuoted).join(" ")} ` +
    `2>${shellQuoted(options.stderr)}`
  const socket = `oc-orch-${options.name}-${process.pid}`
  const tmux = (...args: string[]) => run(["tmux", "-L", socket, ...args], { env: { ...env } })
  await tmux("-f", "/dev/null", "new-session", "-d", "-s", "tui", "-x", "160", "-y", "50", "sh", "-c", command)
  return {
    async say(text) {
      await tmux("send-keys", "-t", "tui", "-l", text)
      await Bun.sleep(300)
      await tmux("send-keys", "-t", "tui", "Enter")
    },
    async press(key) {
      await tmux("send-keys", "-t", "tui", key)
    },
    screen: async () => (await tmux("capture-pane", "-p", "-t", "tui")).stdout,
    pid: async () => Number((await tmux("display-message", "-p", "-t", "tui", "#{pane_pid}")).stdout.trim()),
    async stop() {
      await tmux("kill-server")
    },
  }
}
