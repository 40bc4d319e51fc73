// A delegated agent's question reaching the person through the real Codex 0.171's interactive TUI, under tmux,
// offline on the scripted Responses API, with the compiled binary as its stdio MCP server and the real OpenCode
// behind it. Codex initializes (2025-06-18) declaring elicitation; the scout's question comes to it as
// `elicitation/create` in the middle of the call, and the TUI shows it as its own form ("Field 1/1"). The
// option picked there is what OpenCode's question tool returns, and the report carries it to the parent model.
// Control: the person cancels the form (Esc), and the question reaches OpenCode dismissed. What `codex exec`
// does with the same question (no person: it declines) is test/e2e/codex-long-calls.test.ts. The TUI leaves an
// app-server daemon running when its terminal closes: each test stops it.
import { afterEach, expect, test } from "bun:test"
import { appendFile } from "node:fs/promises"
import { askingTurns, QUESTION } from "../helpers/question"
import { until } from "../helpers/until"
import { CODEX, codexWorld, ourServer, received, scriptedProvider, stopCodexDaemons, TOOL } from "./_codex"
import { startTerminal, type Terminal } from "./_tmux"

const ANSWERED = `"${QUESTION.question}"="countWords"`
const NO_ANSWER = "No answer from the person; reporting without one."
/** The form's heading in Codex's TUI. */
const FORM = `A delegated OpenCode agent asks: ${QUESTION.question}`

const world = codexWorld({
  files: { "README.md": "# tally\n" },
  scripts: (repo) => ({
    // The OpenCode scout: asks, then reports what the question tool returned.
    ask: { turns: askingTurns(NO_ANSWER) },
    // Codex's own turn: delegate to the scout, then say what it returned.
    parent: {
      turns: [
        {
          steps: [
            { tool: TOOL("scout"), args: { cwd: repo, task: "Find out what is needed. [script:ask]" } },
            { text: "Scout said: {{lastToolOutput}}" },
          ],
        },
      ],
    },
  }),
  // Questions are relayed; one the person cancels is dismissed at once, as before task_respond.
  home: { config: { policy: { requireTier: false, relay: ["question"], respondWaitSeconds: 0 } } },
  config: (modelUrl) => [...scriptedProvider(modelUrl), ...ourServer(120)],
})

let terminal: Terminal | undefined
afterEach(async () => {
  await terminal?.stop()
  terminal = undefined
  await stopCodexDaemons(world)
})

/** A fresh Codex TUI in the repository (trusted, so no trust prompt), once its prompt box is drawn. */
async function codexTui(name: string): Promise<Terminal> {
  const config = `${world.codexHome}/config.toml`
  if (!(await Bun.file(config).text()).includes("[projects."))
    await appendFile(config, `[projects."${world.repo}"]\ntrust_level = "trusted"\n`)
  terminal = await startTerminal({
    name,
    cwd: world.repo,
    argv: [CODEX],
    env: {
      ...(world.home.env as Record<string, string>),
      CODEX_HOME: world.codexHome,
      SCRIPTED_KEY: "sk-scripted",
      TERM: "xterm-256color",
    },
    stderr: `${world.home.root}/codex-${name}.txt`,
  })
  expect(await until(async () => (await terminal!.screen()).includes("Ask Codex to do anything"), 60_000)).toBe(true)
  return terminal
}

/** Asks the scout from a fresh TUI; returns it once the question's form is on its screen. */
async function askedInForm(name: string) {
  world.model.reset()
  const tui = await codexTui(name)
  await tui.say("Ask the scout. [script:parent]")
  expect(await until(async () => (await tui.screen()).includes(FORM), 90_000)).toBe(true)
  return tui
}

/**
 * What the scout's call returned to Codex's model, once it did. The TUI also sends side requests without tools
 * (the scripted model plays the parent's step there too, and Codex answers that one "unsupported call"): the
 * call our server answered is the one whose output carries a result.
 */
async function scoutSaid() {
  const output = () =>
    world.model
      .toolResults()
      .map((result) => (result.tool === TOOL("scout") ? received(result.output) : {}))
      .find((result) => result.status !== undefined) as { status?: string; report?: string } | undefined
  expect(await until(() => output() !== undefined, 90_000)).toBe(true)
  return output()!
}

const questionResult = () => world.model.toolResults().find((result) => result.tool === "question")

test("a delegated agent's question is the Codex TUI's own form; the option picked reaches the OpenCode session", async () => {
  const tui = await askedInForm("answered")
  const screen = await tui.screen()
  expect(screen).toContain("1. countWords")
  expect(screen).toContain("2. tally")
  // The first option is selected; Enter submits it.
  await tui.press("Enter")
  const scout = await scoutSaid()
  expect(scout.status).toBe("succeeded")
  expect(scout.report).toContain(ANSWERED)
  expect(questionResult()?.output).toContain(ANSWERED)
}, 180_000)

test("control: the person cancels the form (Esc): the question reaches OpenCode dismissed, the report has no answer", async () => {
  const tui = await askedInForm("cancelled")
  await tui.press("Escape")
  const scout = await scoutSaid()
  expect(scout.report).toBe(NO_ANSWER)
  expect(questionResult()?.output).toBe("The user dismissed this question")
}, 180_000)
