// f) Growth of the shared `opencode serve` with the number of directories it has served: RSS, threads
// and fds (its process and descendants, from /proc) after 1, 10 and 50 directories, each given one scout
// session, with every directory kept (OpenCode's default) beside each released once it rests (what
// instanceIdleSeconds does), and each released with the server restarted whenever it outgrows the default
// serverRecycleMb (what recycle.ts does once it rests), side by side in one run on three fresh servers.
import { rm } from "node:fs/promises"
import { agentName } from "../src/agents/names"
import { createRepository, DEMO_TASK } from "../src/model/demo"
import { createIsolatedHome } from "../src/model/home"
import { ConfigSchema } from "../src/config/schema"
import { InstanceMarks } from "../src/engine/capacity/instance-marks"
import { recycleIfRested } from "../src/engine/capacity/recycle"
import { connect } from "../src/opencode/client"
import { disposeInstance } from "../src/opencode/instances"
import { ensureServer, stopServer, stopServerIfRecorded } from "../src/opencode/server"
import { footprint, settledFootprint, type Footprint } from "../src/util/footprint"

const STEPS = [1, 10, 50]
/** The goal: serve's RSS after 50 idle directories at most this many times its RSS after one. */
const GROWTH_GOAL_RATIO = 1.3

type Mode = "kept" | "released" | "recycled"
type Points = Map<number, Footprint>

/** The curve's footprints, and how many times its server was restarted. */
async function curve(modelUrl: string, path: string, mode: Mode, steps: number[]) {
  const home = await createIsolatedHome({ modelUrl, env: { PATH: path } })
  const dirs: string[] = []
  const points = new Map<number, Footprint>()
  const recycleMb = ConfigSchema.parse({ version: 1 }).serverRecycleMb
  const marks = new InstanceMarks(home.paths.instancesDir)
  let restarts = 0
  /** The most a single reading saw between directories, collector garbage included. */
  let peakMb = 0
  try {
    let record = await ensureServer({ paths: home.paths, binary: "opencode", env: home.env })
    let client = connect(record, { standIns: home.paths.opencodeDirsDir })
    for (let served = 1; served <= Math.max(...steps); served++) {
      const dir = await createRepository("oc-orch-bench-growth-", { "README.md": "# growth\n" })
      dirs.push(dir)
      const created = await client.session.create({ directory: dir, title: "bench growth" })
      if (!created.data) throw new Error(`session.create: ${JSON.stringify(created.error)}`)
      await client.session.prompt({
        sessionID: created.data.id,
        directory: dir,
        agent: agentName("scout"),
        parts: [{ type: "text", text: DEMO_TASK }],
      })
      await client.session.delete({ sessionID: created.data.id, directory: dir })
      // The first directory stays live in the released curve: one directory's cost is the baseline. A
      // restart needs every directory at rest, as in a process whose sweep asks for it.
      if ((mode === "released" && served > 1) || mode === "recycled") await disposeInstance(client, dir)
      if (mode === "recycled") {
        peakMb = Math.max(peakMb, (await footprint(record.pid)).rssMb)
        const connection = { record, client }
        const outcome = await recycleIfRested({
          connection: () => connection,
          limits: async () => ({ recycleMb, restMs: 0 }),
          marks,
          tasksRest: async () => true,
          stop: (stopping) => stopServerIfRecorded(home.paths, stopping),
        })
        // The server the next directory is served by: a fresh one after a restart.
        if (outcome === "recycled") {
          restarts++
          record = await ensureServer({ paths: home.paths, binary: "opencode", env: home.env })
          client = connect(record, { standIns: home.paths.opencodeDirsDir })
        }
      }
      if (steps.includes(served)) points.set(served, await settledFootprint(record.pid))
    }
    return { points, restarts, peakMb }
  } finally {
    await stopServer(home.paths)
    await home.dispose()
    for (const dir of dirs) await rm(dir, { recursive: true, force: true })
  }
}

const row = (f: Footprint) =>
  `${f.rssMb.toFixed(0).padStart(5)} MB ${String(f.threads).padStart(4)} thr ${String(f.fds).padStart(4)} fds`

export async function benchGrowth(modelUrl: string, path: string, steps = STEPS) {
  // At once, so the curves see the same machine load.
  const curves = await Promise.all(
    (["kept", "released", "recycled"] as const).map((mode) => curve(modelUrl, path, mode, steps)),
  )
  const [kept, released, recycled] = curves.map((c) => c.points) as [Points, Points, Points]
  const restarts = curves[2]?.restarts ?? 0
  const peakMb = curves[2]?.peakMb ?? 0
  console.log(
    "f) serve after N directories        kept (no release)              released as they rest" +
      "          released, restarted past serverRecycleMb",
  )
  for (const step of steps)
    console.log(
      `   ${String(step).padStart(3)} directories               ${row(kept.get(step) as Footprint)}   ` +
        `${row(released.get(step) as Footprint)}   ${row(recycled.get(step) as Footprint)}`,
    )
  const last = steps[steps.length - 1] as number
  const ratio = (curveOf: Map<number, Footprint>, key: keyof Footprint) =>
    ((curveOf.get(last) as Footprint)[key] / (curveOf.get(1) as Footprint)[key]).toFixed(2)
  const rssRatio = Number(ratio(recycled, "rssMb"))
  const verdict = rssRatio <= GROWTH_GOAL_RATIO ? "met" : "not met"
  console.log(
    `  growth ${last}/1: RSS ${ratio(kept, "rssMb")}x kept, ${ratio(released, "rssMb")}x released, ${rssRatio}x ` +
      `restarted ${restarts} times, peak read ${peakMb.toFixed(0)} MB ` +
      `(goal ≤ ${GROWTH_GOAL_RATIO}x: ${verdict}); threads ` +
      `${ratio(kept, "threads")}x / ${ratio(released, "threads")}x; ` +
      `fds ${ratio(kept, "fds")}x / ${ratio(released, "fds")}x`,
  )
}
