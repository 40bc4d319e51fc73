// A full (or read-only) state disk: the compiled `serve` runs in a mount namespace (bwrap) whose state
// dir is a tiny tmpfs filled to the brim, or a read-only bind. It still answers the handshake and tools/list, and every tool that needs
// the state dir says the disk is full and what to do, before anything starts; nothing half-written
// stays behind. Control: the same setup with room to spare gets past that check.
import { beforeAll, expect, test } from "bun:test"
import type { CallToolResult } from "@modelcontextprotocol/client"
import { mkdir, rm } from "node:fs/promises"
import { createRepository } from "../../src/model/demo"
import { BINARY, connectStdio, textOf } from "../helpers/mcp"
import { leftoversAfter } from "../helpers/leftovers"
import { homeFor, quick, slowEdit } from "./_home"

const world = homeFor({ slow_edit: slowEdit(3000), quick })
beforeAll(async () => {
  await mkdir(world.home.env.XDG_STATE_HOME!, { recursive: true })
})

/** `serve` with the state dir on a small tmpfs: 64 KiB filled to the brim, or 4 MiB left empty. */
const serveOnTinyDisk = (full: boolean) => {
  const state = world.home.env.XDG_STATE_HOME!
  const fill = full ? `head -c 1000000 /dev/zero > ${state}/fill 2>/dev/null; ` : ""
  return connectStdio(world.home.env, [
    "/usr/bin/bwrap",
    "--dev-bind",
    "/",
    "/",
    "--size",
    full ? "65536" : "4194304",
    "--tmpfs",
    state,
    "--die-with-parent",
    "--",
    "/bin/bash",
    "-c",
    `${fill}exec "$@"`,
    "serve",
    BINARY,
    "serve",
  ])
}

test("serve answers tools/list on a full state disk, and a delegation is refused with the reason and a fix", async () => {
  const mcp = await serveOnTinyDisk(true)
  try {
    const { tools } = await mcp.client.listTools()
    expect(tools.map((tool) => tool.name)).toContain("scout")
    const scout = (await mcp.client.callTool({
      name: "scout",
      arguments: { cwd: `${import.meta.dir}`, task: "look" },
    })) as CallToolResult
    expect(scout.isError).toBe(true)
    expect(textOf(scout)).toMatch(/The state dir .* has \d+ bytes free; a task needs at least 1048576/)
    expect(textOf(scout)).toContain("next: Free space")
    expect(world.model.stepRequests().length).toBe(0)
  } finally {
    await mcp.close()
  }
}, 60_000)

test("control: with room on a small disk, the space check passes (the refusal is the disk, not the setup)", async () => {
  const mcp = await serveOnTinyDisk(false)
  try {
    const scout = (await mcp.client.callTool({
      name: "scout",
      arguments: { cwd: "/nonexistent/dir", task: "look" },
    })) as CallToolResult
    expect(textOf(scout)).not.toContain("bytes free")
    expect(textOf(scout)).toContain("does not exist")
  } finally {
    await mcp.close()
  }
}, 60_000)

test("a read-only state dir: serve answers, and a delegation is refused as read-only before anything starts", async () => {
  const state = world.home.env.XDG_STATE_HOME!
  const mcp = await connectStdio(world.home.env, [
    "/usr/bin/bwrap",
    "--dev-bind",
    "/",
    "/",
    "--ro-bind",
    state,
    state,
    "--die-with-parent",
    "--",
    BINARY,
    "serve",
  ])
  try {
    expect((await mcp.client.listTools()).tools.length).toBeGreaterThan(5)
    const scout = (await mcp.client.callTool({
      name: "scout",
      arguments: { cwd: `${import.meta.dir}`, task: "look" },
    })) as CallToolResult
    expect(scout.isError).toBe(true)
    expect(textOf(scout)).toMatch(/The state dir .* cannot be written: the filesystem is read-only \(EROFS\)/)
    expect(world.model.stepRequests().length).toBe(0)
  } finally {
    await mcp.close()
  }
}, 60_000)

test("the disk fills mid-task: the worker's result still arrives, the workspace is released, nothing is half-written, and the record is written once there is room", async () => {
  const repo = await createRepository("oc-orch-disk-", { "README.md": "# r\n" })
  const state = world.home.paths.stateDir
  for (const dir of ["tasks", "locks"]) await mkdir(`${state}/${dir}`, { recursive: true })
  const fill = `${repo}.fill`
  const free = `${repo}.free`
  // The task records and the writer states are each on a small disk of their own (so a lock file removed
  // frees nothing for a record); a helper inside the namespace fills both, then empties them, when the
  // test says so.
  const dirs = [`${state}/tasks`, `${state}/locks`]
  const helper = `(for i in $(seq 900); do [ -e ${fill} ] && break; sleep 0.1; done; for d in ${dirs.join(" ")}; do head -c 8000000 /dev/zero > $d/fill 2>/dev/null; done; for i in $(seq 900); do [ -e ${free} ] && break; sleep 0.1; done; for d in ${dirs.join(" ")}; do rm -f $d/fill; done) & `
  const disks = dirs.flatMap((dir) => ["--size", "4194304", "--tmpfs", dir])
  const mcp = await connectStdio({ ...world.home.env, OPENCODE_MCP_ORCHESTRATOR_SYNC_BUDGET_MS: "60000" }, [
    "/usr/bin/bwrap",
    "--dev-bind",
    "/",
    "/",
    ...disks,
    "--die-with-parent",
    "--",
    "/bin/bash",
    "-c",
    `${helper}exec "$@"`,
    "serve",
    BINARY,
    "serve",
  ])
  try {
    const serve = Number((await Bun.file(`/proc/${mcp.pid}/task/${mcp.pid}/children`).text()).trim().split(" ")[0])
    const inside = (path: string) => `/proc/${serve}/root${path}`
    const call = mcp.client.callTool(
      { name: "worker", arguments: { cwd: repo, task: "[script:slow_edit] edit" } },
      { timeout: 120_000 },
    ) as Promise<CallToolResult>
    const deadline = Date.now() + 30_000
    while (!(await Bun.file(`${repo}/edited.txt`).exists()) && Date.now() < deadline) await Bun.sleep(100)
    await Bun.write(fill, "")
    // Full once not even a small file fits.
    const full = async () => {
      for (const dir of dirs)
        if (
          await Bun.write(inside(`${dir}/probe`), "x".repeat(8192)).then(
            () => rm(inside(`${dir}/probe`)).then(() => true),
            () => false,
          )
        )
          return false
      return true
    }
    while (!(await full()) && Date.now() < deadline) await Bun.sleep(50)
    const result = await call
    const structured = result.structuredContent as {
      status: string
      files_changed: { path: string }[]
      warnings?: string[]
      task_id: string
    }
    expect(structured.status).toBe("succeeded")
    expect(structured.files_changed.map((file) => file.path)).toEqual(["edited.txt"])
    expect(structured.warnings?.join(" ")).toMatch(
      /record could not be written: Cannot write .*: the disk is full \(ENOSPC\)/,
    )
    // The workspace is free, and nothing half-written is left in the state dir. The store retries the
    // record while the disk stays full, and each attempt's temporary (its name holds the time) lives only
    // while it writes: one left behind is there in two looks half a second apart.
    const files = await Array.fromAsync(new Bun.Glob("**/*").scan({ cwd: inside(state), dot: true }))
    await Bun.sleep(500)
    const later = new Set(await Array.fromAsync(new Bun.Glob("**/*.tmp").scan({ cwd: inside(state), dot: true })))
    expect(files.filter((name) => name.endsWith(".tmp") && later.has(name))).toEqual([])
    expect(files.filter((name) => name.startsWith("locks/") && name.endsWith(".json"))).toEqual([])
    const record = () =>
      Bun.file(inside(`${state}/tasks/${structured.task_id}.json`))
        .json()
        .then(
          (r: { status: string }) => r.status,
          () => "unreadable",
        )
    // Control: while the disk is full, the record on disk does not say how the task ended.
    expect(await record()).toBe("running")
    await Bun.write(free, "")
    const until = Date.now() + 20_000
    while ((await record()) !== "succeeded" && Date.now() < until) await Bun.sleep(200)
    expect(await record()).toBe("succeeded")
    const next = (await mcp.client.callTool(
      { name: "scout", arguments: { cwd: repo, task: "[script:quick] look" } },
      { timeout: 60_000 },
    )) as CallToolResult
    expect((next.structuredContent as { status: string }).status).toBe("succeeded")
  } finally {
    await Bun.write(fill, "")
    await Bun.write(free, "")
    await mcp.close()
    await rm(repo, { recursive: true, force: true })
    await rm(fill, { force: true })
    await rm(free, { force: true })
  }
}, 120_000)

test("after the last MCP process leaves, nothing it started is left running within 15 s", async () => {
  expect(await leftoversAfter(world.home.root)).toEqual([])
}, 30_000)
