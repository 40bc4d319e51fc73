// What a delegation needs from the world, gathered once per MCP server process: paths, flags, the
// config (re-read on each call so an edit applies without a restart) and the shared OpenCode server.
import type { OpencodeClient } from "@opencode-ai/sdk/v2"
import type { Flags } from "../../config/flags"
import { loadConfig } from "../../config/load"
import { resolvePaths, type Paths } from "../../config/paths"
import type { Config } from "../../config/schema"
import type { EventHub } from "../../opencode/client"
import type { TaskStore } from "../store"
import { confirmSandboxed } from "../../opencode/guard"
import {
  ensureServer,
  probeServer,
  readServerRecord,
  stopServerIfRecorded,
  type ServerRecord,
} from "../../opencode/server"
import { fail } from "../../errors"
import { hostContext, LAUNCHERS, standInOf, type HostContext, type Launchers } from "../../sandbox"
import { InstanceMarks } from "./instance-marks"
import { Instances } from "./instances"
import { recycleIfRested } from "./recycle"

/** How often idle instances are looked for: a tenth of the shortest idle time allowed would be too busy. */
const SWEEP_TICK_MS = 1000

export interface Connection {
  record: ServerRecord
  client: OpencodeClient
  hub: EventHub
  /** Stand-ins (sandbox/stand-ins.ts) whose instance was confirmed to have the sandboxed tools (opencode/guard.ts). */
  confirmed: Set<string>
}

/**
 * The reads a delegation's start makes of the shared server, in order: its event stream, its tool ids
 * (our plugin loaded for the directory, opencode/guard.ts) and the model catalog (routes.ts).
 */
export type ServerRead = "events" | "tool ids" | "catalog"

export interface RuntimeOptions {
  launchers?: Launchers
  /** Called before each read of the shared server (tests kill the server at one, to stand for its death there). */
  beforeRead?: (read: ServerRead, record: ServerRecord) => Promise<void>
}

export class Runtime {
  readonly paths: Paths
  private connection?: Connection
  private connecting?: Promise<Connection>
  private closed = false
  /** The task store as the recycle check reads it (one per process, opened on first need). */
  private restStore?: TaskStore
  /** The instances of directories this process delegated to, released once they rest. */
  readonly instances: Instances

  /** The launchers and bwrap the readiness checks look at (readiness.ts); the plugin runs LAUNCHERS. */
  readonly launchers: Launchers

  private readonly beforeRead: NonNullable<RuntimeOptions["beforeRead"]>

  constructor(
    readonly flags: Flags,
    options: RuntimeOptions = {},
  ) {
    this.paths = resolvePaths(flags)
    this.beforeRead = options.beforeRead ?? (async () => {})
    this.launchers = options.launchers ?? LAUNCHERS
    const marks = new InstanceMarks(this.paths.instancesDir)
    this.instances = new Instances({
      client: () => this.current()?.client,
      limits: async () => {
        const config = await this.config()
        return { idleMs: config.instanceIdleSeconds * 1000, maxLive: config.maxLiveInstances }
      },
      marks,
      recycle: () => this.recycle(marks),
    })
  }

  /** Restarts the shared server if it rests and has outgrown `serverRecycleMb` (recycle.ts). */
  recycle(marks = new InstanceMarks(this.paths.instancesDir)) {
    return recycleIfRested({
      connection: () => this.current(),
      limits: async () => {
        const config = await this.config()
        return { recycleMb: config.serverRecycleMb, restMs: config.instanceIdleSeconds * 1000 }
      },
      marks,
      tasksRest: () => this.tasksRest(),
      stop: async (record, step) => {
        const stopped = await stopServerIfRecorded(this.paths, record, { step })
        // The next call finds no server and starts one; this connection's stream would only retry.
        if (stopped && this.connection?.record === record) this.drop()
        return stopped
      },
    })
  }

  config(): Promise<Config> {
    return loadConfig(this.paths.configFile)
  }

  /** The host context every sandbox plan and path check of this process takes: the flags and the config's roots. */
  host(config: Config): HostContext {
    return hostContext(this.flags, config.sandboxRuntime.trustedRoots)
  }

  /** The shared server, started or restarted when it is not running. */
  async opencode(): Promise<Connection> {
    // A task still settling after shutdown must not start a new shared server behind our back.
    if (this.closed)
      throw fail(
        "Server",
        "This MCP server is shutting down; OpenCode is no longer reached from it.",
        "The next MCP server process recovers the task from its record.",
      )
    // One loopback health check per call (about a millisecond) catches a server that died or hangs.
    if (this.connection && (await probeServer(this.connection.record)) === "healthy") return this.connection
    this.connecting ??= this.open().finally(() => (this.connecting = undefined))
    return this.connecting
  }

  /** The connection already open, if any: for a process leaving, which must not start a server. */
  current(): Connection | undefined {
    return this.closed ? undefined : this.connection
  }

  private async open(): Promise<Connection> {
    // A slow server is waited out there (never killed at the first silence); one that answers again is
    // the same server, and its connection, event stream and listeners carry on.
    const record = await ensureServer({ paths: this.paths, binary: this.flags.opencodeBin, env: this.flags.env })
    const current = this.connection
    if (
      current &&
      current.record.pid === record.pid &&
      current.record.url === record.url &&
      current.record.password === record.password
    )
      return current
    if (current) this.drop()
    // Loaded with the first delegation, not at start: `tools/list` does not need the OpenCode SDK.
    const { connect, EventHub } = await import("../../opencode/client")
    await this.beforeRead("events", record)
    const client = connect(record, { standIns: this.paths.opencodeDirsDir })
    const hub = new EventHub(record)
    // A hub that never connected would keep reconnecting for ever; close it with the error.
    await hub.connected().catch((error: unknown) => {
      hub.close()
      throw error
    })
    const confirmed = new Set<string>()
    // Whoever released an instance (any process), the next one there is confirmed sandboxed afresh.
    hub.onAny((event) => {
      if (event.type === "server.instance.disposed") confirmed.delete(event.properties.directory)
    })
    this.connection = { record, client, hub, confirmed }
    this.instances.start(SWEEP_TICK_MS)
    return this.connection
  }

  /**
   * The shared server, confirmed to sandbox every file access of a delegation in `directory`, with `read`
   * (the catalog, say) made of it. A server that stops answering during any of these reads has not
   * answered them: they run once more, all of them, on the server found or started in its place. A live
   * server's answer stands.
   */
  sandboxed(directory: string, read?: (connection: Connection) => Promise<void>): Promise<Connection> {
    return this.onAnsweringServer(async (connection) => {
      this.instances.touch(directory)
      // OpenCode's instances, and its events, are named by stand-ins: the confirmation is kept by one too.
      const standIn = standInOf(this.paths.opencodeDirsDir, directory)
      if (!connection.confirmed.has(standIn)) {
        await this.beforeRead("tool ids", connection.record)
        await confirmSandboxed(connection.client, connection.record.version, directory)
        connection.confirmed.add(standIn)
      }
      if (read) {
        await this.beforeRead("catalog", connection.record)
        await read(connection)
      }
      return connection
    })
  }

  /** The model catalog of the shared server (the models tool), read again on a successor as `sandboxed` reads. */
  catalog<T>(read: (connection: Connection) => Promise<T>): Promise<T> {
    return this.onAnsweringServer(async (connection) => {
      await this.beforeRead("catalog", connection.record)
      return read(connection)
    })
  }

  /** `reads` on the shared server, once more on its successor when the server stopped answering under them. */
  private async onAnsweringServer<T>(reads: (connection: Connection) => Promise<T>): Promise<T> {
    for (let attempt = 1; ; attempt++) {
      let connection: Connection | undefined
      try {
        connection = await this.opencode()
        return await reads(connection)
      } catch (error) {
        if (attempt >= 2 || !(await this.replaced(connection))) throw error
      }
    }
  }

  /** True when the server a failed read went to (the recorded one, before a connection) no longer answers. */
  private async replaced(connection: Connection | undefined): Promise<boolean> {
    const record = connection?.record ?? (await readServerRecord(this.paths))
    return record !== undefined && (await probeServer(record)) !== "healthy"
  }

  /**
   * Released at once where no session runs (best effort): a freed lane, or, with no argument, every
   * directory of a process leaving.
   */
  async releaseInstances(directories = this.instances.live()): Promise<string[]> {
    return this.instances.release(directories).catch(() => [])
  }

  close() {
    this.instances.stop()
    this.closed = true
    this.connection?.hub.close()
    this.connection = undefined
  }

  /** True when no task of any process sharing this state dir is unfinished (running, waiting, settling). */
  async tasksRest(): Promise<boolean> {
    // Loaded only when a server has outgrown its limit: an idle MCP server never opens the store.
    const { TaskStore } = await import("../store")
    this.restStore ??= new TaskStore(this.paths.tasksDir)
    return (await this.restStore.unfinished()).length === 0
  }

  /** Forgets a connection to a server that is gone, with the instances it held. */
  private drop() {
    this.connection?.hub.close()
    this.connection = undefined
    this.instances.forgetServer()
  }
}
