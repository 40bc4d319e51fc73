// `watch <task_id|session_id>` on the real OpenCode with the scripted model, in a real terminal (tmux):
// a task left running (a slow scripted step) is opened in OpenCode's own UI, which shows the brief; the
// server password is in neither the argv of any process the command starts nor the screen. Plugin code an
// agent plants in the workspace (tui.json and .opencode/tui.json naming a plugin for the UI, a file in
// .opencode/plugins and opencode.json naming one for the server) is imported neither by the UI nor by the
// server (watch names the workspace's stand-in), while a plain `opencode attach --dir` there imports it (the control). Controls: an unknown task id, a
// task whose session is gone or is no session id, and a word that is no id each exit 2 with no UI; no
// shared server (none recorded, or a garbage record) exits 5 with the message. Every result names the command.
import { afterAll, beforeAll, describe, expect, test } from "bun:test"
import { readdirSync, readFileSync } from "node:fs"
import { mkdir, mkdtemp, readdir, readFile, writeFile } from "node:fs/promises"
import { tmpdir } from "node:os"
import { resolve } from "node:path"
import { readFlags } from "../../src/config/flags"
import { resolvePaths } from "../../src/config/paths"
import { TaskStore } from "../../src/engine/store/task-store"
import { newTaskId } from "../../src/engine/records/tasks"
import type { TaskRecord } from "../../src/engine/records/record-schema"
import { parseWatchId } from "../../src/engine/watch"
import { createIsolatedHome } from "../../src/model/home"
import { readServerRecord } from "../../src/opencode/server"
import { run } from "../../src/util/process"
import { TEST_PATH } from "../helpers/mcp"
import { slowTurn } from "../helpers/slow-turn"
import { connect, makeRepo, startWorld, stopWorld, structured, text, type Connected, type World } from "../mcp/_setup"

const MAIN = resolve(import.meta.dir, "../../src/cli/main.ts")
const MARKER = "WATCH-MARKER-5e1f"
const SOCKET = `oc-orch-watch-${process.pid}`

let world: World
let mcp: Connected
/** The task the first test leaves running, and its workspace. */
let running: { id: string; sessionID: string; repo: string } | undefined

beforeAll(async () => {
  world = await startWorld({ slow: slowTurn("late", 300_000) })
  mcp = await connect(world, { syncBudgetMs: 3000 })
}, 120_000)
afterAll(async () => {
  await run(["tmux", "-L", SOCKET, "kill-server"])
  await mcp?.close()
  await stopWorld(world)
})

const tmux = (...args: string[]) => run(["tmux", "-L", SOCKET, ...args], { env: { ...world.home.env, TERM: "xterm" } })
/** A detached tmux session `name` of 160x45 running `rest` (its options, then its command). */
const sessionArgs = (name: string, ...rest: string[]) => [
  "new-session",
  "-d",
  "-s",
  name,
  "-x",
  "160",
  "-y",
  "45",
  ...rest,
]
const newSession = (name: string, ...rest: string[]) => tmux(...sessionArgs(name, ...rest))
/** The same, on a server started with no config file (the first session of a server). */
const firstSession = (name: string, ...rest: string[]) => tmux("-f", "/dev/null", ...sessionArgs(name, ...rest))
/**
 * `start` (a first session) on a fresh tmux server: a server just killed may still be going away and refuse the
 * session, so it is killed again and the start retried, up to five times.
 */
async function onFreshServer(start: () => ReturnType<typeof tmux>) {
  for (let attempt = 1; ; attempt++) {
    await run(["tmux", "-L", SOCKET, "kill-server"])
    const started = await start()
    if (started.code === 0 || attempt === 5) return started
    await Bun.sleep(500)
  }
}
const screen = async () => (await tmux("capture-pane", "-p", "-t", "watch")).stdout
const watchCli = (env: Record<string, string | undefined>, id: string) =>
  run([process.execPath, MAIN, "watch", id], {
    env: { ...env, BUN_RUNTIME_TRANSPILER_CACHE_PATH: "0" },
    timeoutMs: 60_000,
  })

/** Every process below `pid`, from /proc. */
function descendants(pid: number): number[] {
  const parents = new Map<number, number>()
  for (const name of readdirSync("/proc").filter((entry) => /^\d+$/.test(entry))) {
    try {
      const stat = readFileSync(`/proc/${name}/stat`, "utf8")
      parents.set(Number(name), Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]))
    } catch {
      // The process left while the table was read: it is no descendant now.
    }
  }
  const found = [pid]
  for (let i = 0; i < found.length; i++)
    for (const [child, parent] of parents) if (parent === found[i]) found.push(child)
  return found
}

const cmdline = (pid: number) => {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, "utf8").replaceAll("\0", " ")
  } catch {
    // Gone since it was listed.
    return ""
  }
}

/** The task's session id, from task_status once OpenCode has made it. */
async function sessionOf(taskID: string): Promise<string> {
  for (let revision = 0; ; ) {
    const status = structured(
      await mcp.client.callTool({
        name: "task_status",
        arguments: { task_id: taskID, after_revision: revision, wait_seconds: 10 },
      }),
    )
    if (status.session_id) return String(status.session_id)
    if (status.status !== "running") throw new Error(`task ${taskID} ended ${String(status.status)} with no session`)
    revision = Number(status.revision)
  }
}

async function until(check: () => Promise<boolean>, ms: number) {
  const deadline = Date.now() + ms
  while (Date.now() < deadline) {
    if (await check()) return true
    await Bun.sleep(500)
  }
  return false
}

function record(sessionID?: string): TaskRecord {
  const now = new Date().toISOString()
  return {
    ...{ version: 1, id: newTaskId(), role: "scout", agent: "opencode-orchestrator-scout", workspace: "/w/repo" },
    ...{ title: "t", writable: false, status: "succeeded", sessions: [], ownerPid: 1, createdAt: now, updatedAt: now },
    ...{ deadline: 0, operationMs: 0, turns: 1, revision: 1, progress: [], sessionID },
  }
}

describe("watch", () => {
  test("a running task opens in OpenCode's UI showing its brief, and the password is nowhere to be seen", async () => {
    const repo = await makeRepo(world)
    const result = await mcp.client.callTool({
      name: "scout",
      arguments: { cwd: repo, task: `${MARKER} [script:slow]` },
    })
    const reply = structured(result)
    expect(reply.status).toBe("running")
    const id = reply.task_id!
    // The reply comes at the sync budget, which may be before OpenCode made the session; the status names it.
    const sessionID = reply.session_id ? String(reply.session_id) : await sessionOf(id)
    running = { id, sessionID, repo }
    expect(reply.watch).toBe(`opencode-mcp-orchestrator watch ${id}`)
    expect(text(result)).toContain(`\nwatch: opencode-mcp-orchestrator watch ${id}`)
    const password = (await readServerRecord(world.home.paths))!.password
    const command = `${process.execPath} ${MAIN} watch ${id}`
    const started = await firstSession("watch", command)
    expect(started.code).toBe(0)
    expect(await until(async () => (await screen()).includes(MARKER), 90_000)).toBe(true)
    const panePid = Number((await tmux("list-panes", "-t", "watch", "-F", "#{pane_pid}")).stdout.trim())
    const lines = descendants(panePid).map(cmdline)
    // Control: the UI is OpenCode's own, attached to the shared server on this task's session.
    expect(lines.some((line) => line.includes(" attach http://127.0.0.1:") && line.includes(sessionID))).toBe(true)
    for (const line of lines) expect(line).not.toContain(password)
    expect(await screen()).not.toContain(password)
    await run(["tmux", "-L", SOCKET, "kill-server"])
  }, 180_000)

  test("a running task watched without a terminal is refused with exit 2, naming what to use instead", async () => {
    expect(running).toBeDefined()
    const piped = await watchCli(world.home.env, running!.id)
    expect(piped.code).toBe(2)
    expect(piped.stderr).toContain(`needs a terminal; stdin or stdout is not one, so ${running!.sessionID}`)
    expect(piped.stdout).toBe("")
  }, 120_000)

  test("config an agent planted in the workspace is not loaded by the watching UI (control: a plain attach loads it)", async () => {
    expect(running).toBeDefined()
    const { id, sessionID, repo } = running!
    const markers = await mkdtemp(`${tmpdir()}/oc-orch-watch-markers-`)
    world.dirs.push(markers)
    // Importing the module is enough: a plugin runs its top level on the host, as the person.
    const plugin = (where: string) =>
      `import { appendFileSync } from "node:fs"\n` +
      `appendFileSync(${JSON.stringify(markers)} + "/" + (process.env.WATCH_RUN ?? "x"), ${JSON.stringify(where)} + "\\n")\n` +
      "export default { id: 'planted', tui: async () => {} }\n"
    await mkdir(`${repo}/.opencode/plugins`, { recursive: true })
    await Bun.write(`${repo}/.opencode/planted.js`, plugin(".opencode/tui.json"))
    await Bun.write(`${repo}/planted-root.js`, plugin("tui.json"))
    await Bun.write(`${repo}/.opencode/plugins/planted.js`, plugin(".opencode/plugins"))
    await Bun.write(`${repo}/.opencode/tui.json`, JSON.stringify({ plugin: [`file://${repo}/.opencode/planted.js`] }))
    await Bun.write(`${repo}/tui.json`, JSON.stringify({ plugin: [`file://${repo}/planted-root.js`] }))
    // And for the server: a project config naming a plugin, which a server loading an instance there imports.
    await Bun.write(`${repo}/opencode.json`, JSON.stringify({ plugin: [`file://${repo}/planted-root.js`] }))
    const server = (await readServerRecord(world.home.paths))!
    const plain = `${server.binary} attach ${server.url} --session ${sessionID} --dir ${repo}`
    const watched = await firstSession("watch", "-e", "WATCH_RUN=watch", `${process.execPath} ${MAIN} watch ${id}`)
    expect(`${watched.code} ${watched.stderr.trim()}`).toBe("0 ")
    expect(await until(async () => (await screen()).includes(MARKER), 90_000)).toBe(true)
    // Nothing imported, by the UI (its marker "watch") or by the server loading an instance ("x").
    expect(await readdir(markers)).toEqual([])
    const control = await newSession(
      "plain",
      "-e",
      "WATCH_RUN=plain",
      "-e",
      `OPENCODE_SERVER_PASSWORD=${server.password}`,
      plain,
    )
    expect(`${control.code} ${control.stderr.trim()}`).toBe("0 ")
    const loaded = (run: string) => readFile(`${markers}/${run}`, "utf8").catch(() => "")
    // The control: OpenCode's own attach in that directory imports what was planted there.
    expect(await until(async () => (await loaded("plain")) !== "", 90_000)).toBe(true)
    expect(await loaded("watch")).toBe("")
    await run(["tmux", "-L", SOCKET, "kill-server"])
  }, 240_000)

  test("in a terminal: a session id opens that session; an unknown task id exits 2 and draws no UI", async () => {
    expect(running).toBeDefined()
    const unknown = newTaskId()
    const shell = `${process.execPath} ${MAIN} watch ${unknown}; echo "exit=$?"; sleep 120`
    // A tmux server an earlier test stopped may still be going away: this test starts on a fresh one.
    const started = [
      await onFreshServer(() => firstSession("watch", `${process.execPath} ${MAIN} watch ${running!.sessionID}`)),
      await newSession("unknown", "sh", "-c", shell),
    ]
    expect(started.map((out) => out.code)).toEqual([0, 0])
    expect(await until(async () => (await screen()).includes(MARKER), 90_000)).toBe(true)
    const other = async () => (await tmux("capture-pane", "-p", "-t", "unknown")).stdout
    expect(await until(async () => (await other()).includes("exit="), 60_000)).toBe(true)
    expect(await other()).toContain(`No task ${unknown}`)
    expect(await other()).toContain("exit=2")
    const panePid = Number((await tmux("list-panes", "-t", "unknown", "-F", "#{pane_pid}")).stdout.trim())
    expect(
      descendants(panePid)
        .map(cmdline)
        .filter((line) => line.includes(" attach ")),
    ).toEqual([])
    await run(["tmux", "-L", SOCKET, "kill-server"])
  }, 240_000)

  test("an unknown task id, a task whose session is gone and a word that is no id exit 2 without a UI", async () => {
    const unknown = await watchCli(world.home.env, newTaskId())
    expect(unknown.code).toBe(2)
    expect(unknown.stderr).toContain("No task task_")
    const gone = record("ses_gone0000000000000000000")
    await new TaskStore(world.home.paths.tasksDir).save(gone)
    const left = await watchCli(world.home.env, gone.id)
    expect(left.code).toBe(2)
    expect(left.stderr).toContain("is not on the shared OpenCode server")
    // A record naming something else as its session: it would become an option of opencode attach.
    const forged = record("--password=x")
    await new TaskStore(world.home.paths.tasksDir).save(forged)
    const option2 = await watchCli(world.home.env, forged.id)
    expect(option2.code).toBe(2)
    expect(option2.stderr).toContain("names no valid session id")
    const bad = await watchCli(world.home.env, "ses_a;touch x")
    expect(bad.code).toBe(2)
    expect(bad.stderr).toContain("neither a task id")
    const option = await watchCli(world.home.env, "--password=x")
    expect(option.code).toBe(2)
    for (const out of [unknown, left, option2, bad, option]) expect(out.stdout).toBe("")
  }, 120_000)

  test("no shared server, or a garbage server record: exit 5 with the message", async () => {
    const home = await createIsolatedHome({ modelUrl: world.model.url, env: { PATH: TEST_PATH } })
    try {
      const paths = resolvePaths(readFlags(home.env))
      const task = record("ses_abc0000000000000000000")
      await mkdir(paths.tasksDir, { recursive: true })
      await new TaskStore(paths.tasksDir).save(task)
      const none = await watchCli(home.env, task.id)
      expect(none.code).toBe(5)
      expect(none.stderr).toContain("The shared OpenCode server is not running")
      await mkdir(paths.stateDir, { recursive: true })
      await writeFile(paths.serverFile, "{ not json")
      const garbage = await watchCli(home.env, task.id)
      expect(garbage.code).toBe(5)
      expect(garbage.stderr).toContain("The shared OpenCode server is not running")
    } finally {
      await home.dispose()
    }
  }, 120_000)

  test("only task and session ids are taken (they become an argument of opencode attach)", () => {
    expect(parseWatchId("ses_3f2aXyz")).toEqual({ kind: "session", sessionID: "ses_3f2aXyz" })
    for (const word of ["ses_x --dir /", "-s", "task_../x", "http://127.0.0.1:1", ""])
      expect(() => parseWatchId(word)).toThrow(/neither a task id/)
  })
})
