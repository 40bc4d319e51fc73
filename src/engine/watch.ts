// The live view's use case: which session `watch <task_id|session_id>` opens, and how OpenCode's own
// terminal UI is started on it. Pure: the CLI (src/cli/watch.ts) reads the records and starts the child.
import type { Env } from "../config/flags"
import { fail } from "../errors"
import type { ServerRecord } from "../opencode/server"
import { requireSession, TASK_ID, type TaskRecord } from "./records"

const SESSION_ID = /^ses_[A-Za-z0-9]+$/

export type WatchTarget = { kind: "task"; taskID: string } | { kind: "session"; sessionID: string }

/** What the word names; anything but a task id or a session id is refused before anything is read. */
export function parseWatchId(id: string): WatchTarget {
  if (TASK_ID.test(id)) return { kind: "task", taskID: id }
  if (SESSION_ID.test(id)) return { kind: "session", sessionID: id }
  throw fail(
    "Usage",
    `${JSON.stringify(id.slice(0, 60))} is neither a task id (task_…) nor a session id (ses_…); nothing was opened.`,
    "Pass the task_id a delegation returned; `opencode-mcp-orchestrator tasks` lists them.",
  )
}

/** The session a task's record names now (a continued task's latest turn). */
export function taskSession(taskID: string, record: TaskRecord | undefined): string {
  if (!record)
    throw fail(
      "Usage",
      `No task ${taskID} in this account's task store; nothing was opened.`,
      "`opencode-mcp-orchestrator tasks` lists the known tasks.",
    )
  requireSession(record, taskID, "watch", "Read what it did with task_result.")
  // A record is a file on disk: what it names goes to argv only in the shape OpenCode gives session ids.
  if (!SESSION_ID.test(record.sessionID))
    throw fail("Usage", `Task ${taskID} names no valid session id; nothing was opened.`, "Read it with task_result.")
  return record.sessionID
}

export const noServer = () =>
  fail(
    "Server",
    "The shared OpenCode server is not running, so no delegated session can be watched.",
    "It starts with the next delegation (scout, worker, runner); watch a task while it runs.",
  )

export const sessionGone = (sessionID: string) =>
  fail(
    "Usage",
    `Session ${sessionID} is not on the shared OpenCode server (it finished and was removed, or never was).`,
    "Read a finished task with task_result or session_output.",
  )

// Without one OpenCode's UI cannot draw and waits on a pipe: refused, with the ways that need none.
export const noTerminal = (sessionID: string) =>
  fail(
    "Usage",
    `watch draws OpenCode's UI and needs a terminal; stdin or stdout is not one, so ${sessionID} was not opened.`,
    "Run it in a terminal; without one, task_status (wait_seconds) or session_output follow the task.",
  )

/**
 * `opencode attach` on the session. The password is never an argument (any process may read argv): the
 * child reads it from OPENCODE_SERVER_PASSWORD. Without plugins or project config: the UI runs on the
 * host, in a directory an agent has written to.
 */
export function attachCommand(server: ServerRecord, sessionID: string, directory: string, env: Env) {
  if (!directory.startsWith("/")) throw sessionGone(sessionID)
  return {
    argv: [server.binary, "attach", server.url, `--session=${sessionID}`, `--dir=${directory}`, "--pure"],
    env: {
      ...env,
      OPENCODE_SERVER_USERNAME: server.username,
      OPENCODE_SERVER_PASSWORD: server.password,
      OPENCODE_DISABLE_PROJECT_CONFIG: "1",
      OPENCODE_DISABLE_CLAUDE_CODE: "1",
      OPENCODE_DISABLE_AUTOUPDATE: "1",
    },
  }
}
