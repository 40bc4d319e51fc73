// A patch's lifecycle closes, on the real OpenCode, the scripted model and the sandbox: waiting, then
// applied, then discarded, and each state is what task_list, patch_show and the tools themselves say.
// A second patch_apply of an applied patch is answered "already applied" (nothing written), a second
// patch_discard "already discarded"; racing applies write once; a tombstone killed half-way, garbage
// in its place, or one forged by a worker's shell never makes a stored patch look discarded.
import { expect, test } from "bun:test"
import { existsSync } from "node:fs"
import { writeFile } from "node:fs/promises"
import { discardedFile, patchRecordFile } from "../../src/workspace/patches/patches"
import { fileWorld } from "../mcp/_file-world"
import { connect, structured, text } from "../mcp/_setup"
import { commitRepo } from "../helpers/git"
import { write } from "../helpers/steps"
import { apply, discard } from "../helpers/patch-tools"
import { scratch } from "../helpers/world"

const world = fileWorld({
  add: { turns: [{ steps: [write("added.txt", "from the worker\n"), { text: "Added added.txt." }] }] },
})

async function repo(): Promise<string> {
  return commitRepo(await scratch(world, "oc-orch-life-"), { "README.md": "# demo\n" })
}

interface Listed {
  patches?: Array<{ patch_id: string; state: string; applied_at?: string }>
}

type Client = Awaited<ReturnType<typeof connect>>["client"]

async function isolated(
  client: Client,
  cwd: string,
): Promise<{ patch_id: string; digest: string; state: string; task_id: string }> {
  const out = structured(
    await client.callTool({
      name: "worker",
      arguments: { cwd, task: "Add a file. [script:add]", isolation: "worktree" },
    }),
  )
  expect(out.status).toBe("succeeded")
  return { ...(out.patch as { patch_id: string; digest: string; state: string }), task_id: String(out.task_id) }
}

/** The task's result as task_result gives it now: its patch's state and the text line naming it. */
async function resultState(client: Client, taskId: string) {
  const result = await client.callTool({ name: "task_result", arguments: { task_id: taskId } })
  return {
    state: (structured(result).patch as { state?: string }).state,
    line: text(result)
      .split("\n")
      .find((line) => line.startsWith("patch: ")),
  }
}

const listed = async (client: Client, cwd: string) =>
  structured(await client.callTool({ name: "task_list", arguments: { cwd } })) as unknown as Listed

test("waiting, applied, discarded: every listing says which; a second apply and a second discard are answered plainly", async () => {
  const cwd = await repo()
  const { client, close } = await connect(world)
  try {
    const patch = await isolated(client, cwd)
    expect(patch.state).toBe("waiting")
    expect(await resultState(client, patch.task_id)).toEqual({
      state: "waiting",
      line: expect.stringContaining(`patch: ${patch.patch_id} (waiting, digest`),
    })
    expect((await listed(client, cwd)).patches).toEqual([
      expect.objectContaining({ patch_id: patch.patch_id, state: "waiting" }),
    ])
    expect(
      structured(await client.callTool({ name: "patch_show", arguments: { patch_id: patch.patch_id } })).state,
    ).toBe("waiting")

    const applied = await apply(client, patch)
    expect(applied.isError).toBeFalsy()
    expect(text(applied)).toMatch(/\nnext: .*patch_discard \(patch_id "patch_/)
    const out = structured(applied)
    expect(out).toMatchObject({ patch_id: patch.patch_id, state: "applied" })
    expect(String(out.next)).toContain("patch_discard")
    expect(await Bun.file(`${cwd}/added.txt`).text()).toBe("from the worker\n")

    const list = await listed(client, cwd)
    expect(list.patches).toEqual([
      expect.objectContaining({ patch_id: patch.patch_id, state: "applied", applied_at: out.applied_at }),
    ])
    expect(text(await client.callTool({ name: "task_list", arguments: { cwd } }))).toContain(
      `${patch.patch_id}  applied at ${out.applied_at}`,
    )
    expect(await resultState(client, patch.task_id)).toEqual({
      state: "applied",
      line: expect.stringContaining(`patch: ${patch.patch_id} (applied, digest`),
    })
    const shown = await client.callTool({ name: "patch_show", arguments: { patch_id: patch.patch_id } })
    expect(structured(shown)).toMatchObject({ state: "applied", applied_at: out.applied_at })
    expect(text(shown)).toContain(`· applied at ${out.applied_at}`)

    // The user edits the applied file: a second apply must neither refuse as "changed since the snapshot" nor write.
    await writeFile(`${cwd}/added.txt`, "the user's edit\n")
    const again = await apply(client, patch)
    expect(again.isError).toBeFalsy()
    expect(text(again)).toContain(`already applied at ${out.applied_at}`)
    expect(text(again)).not.toContain("changed since")
    expect(String(structured(again).next)).toContain("patch_discard")
    expect(await Bun.file(`${cwd}/added.txt`).text()).toBe("the user's edit\n")
    // Control: a digest that is not the patch's is still refused, applied or not.
    const wrong = await apply(client, patch, { digest: "0".repeat(64) })
    expect(wrong.isError).toBe(true)
    expect(text(wrong)).toContain("digest does not match")

    const discarded = await discard(client, patch.patch_id)
    expect(discarded.isError).toBeFalsy()
    expect(structured(discarded)).toMatchObject({ state: "discarded", was: "applied" })
    const twice = await discard(client, patch.patch_id)
    expect(twice.isError).toBeFalsy()
    expect(text(twice)).toContain(`already discarded at ${structured(discarded).discarded_at}`)
    expect(structured(twice)).toMatchObject({ state: "discarded", already_discarded: true })
    for (const tool of ["patch_show", "patch_apply"]) {
      const late = await client.callTool({ name: tool, arguments: { patch_id: patch.patch_id, digest: patch.digest } })
      expect(late.isError).toBe(true)
      expect(text(late)).toContain(
        `was discarded at ${structured(discarded).discarded_at} (applied at ${out.applied_at})`,
      )
    }
    expect((await listed(client, cwd)).patches).toBeUndefined()
    expect((await resultState(client, patch.task_id)).state).toBe("discarded")
    // Control: a patch id that never existed is still an error, not "already discarded".
    const unknown = await discard(client, "patch_zz9_00aa")
    expect(unknown.isError).toBe(true)
    expect(text(unknown)).toContain("No patch patch_zz9_00aa")
  } finally {
    await close()
  }
}, 120_000)

test("two patch_apply calls racing on one patch write it once; the loser is answered, the record says applied", async () => {
  const cwd = await repo()
  const { client, close } = await connect(world)
  try {
    const patch = await isolated(client, cwd)
    const calls = await Promise.all([0, 1, 2].map(() => apply(client, patch)))
    const wrote = calls.filter((call) => !call.isError && text(call).startsWith("Applied patch"))
    expect(wrote.length).toBe(1)
    // The others were answered: already applied, or refused while the first held the workspace; never "changed since".
    for (const call of calls.filter((c) => !wrote.includes(c))) expect(text(call)).toMatch(/already applied at|held by/)
    expect(calls.map(text).join("\n")).not.toContain("changed since")
    const after = await apply(client, patch)
    expect(text(after)).toContain("already applied at")
    expect(await Bun.file(`${cwd}/added.txt`).text()).toBe("from the worker\n")
    expect((await discard(client, patch.patch_id)).isError).toBeFalsy()
  } finally {
    await close()
  }
}, 120_000)

test("a discard killed after its tombstone, a garbage tombstone, and one a worker's shell tries to forge never hide a stored patch", async () => {
  const cwd = await repo()
  const { client, close } = await connect(world)
  const dir = world.home.paths.patchesDir
  try {
    const victim = await isolated(client, cwd)
    // Killed between the tombstone and the record's removal: the record still answers, and a discard again finishes.
    await writeFile(
      discardedFile(dir, victim.patch_id),
      JSON.stringify({ version: 1, id: victim.patch_id, discardedAt: new Date().toISOString(), workspace: cwd }),
    )
    expect((await listed(client, cwd)).patches).toEqual([
      expect.objectContaining({ patch_id: victim.patch_id, state: "waiting" }),
    ])
    const finished = await discard(client, victim.patch_id)
    expect(text(finished)).toStartWith(`Discarded patch ${victim.patch_id}`)
    expect(existsSync(patchRecordFile(dir, victim.patch_id))).toBe(false)

    // Garbage in the tombstone's place: set aside, and the patch reads as unknown (an error), never as discarded.
    await writeFile(discardedFile(dir, victim.patch_id), "{ not json")
    const garbage = await discard(client, victim.patch_id)
    expect(garbage.isError).toBe(true)
    expect(text(garbage)).toContain(`No patch ${victim.patch_id}`)
    expect(existsSync(`${discardedFile(dir, victim.patch_id)}.corrupt`)).toBe(true)

    // A worker's shell writes a tombstone for a waiting patch into the state dir: the sandbox has no such path.
    const waiting = await isolated(client, cwd)
    const forge = `mkdir -p ${dir} && echo '{"version":1,"id":"${waiting.patch_id}","discardedAt":"2026-01-01T00:00:00.000Z","workspace":"${cwd}"}' > ${discardedFile(dir, waiting.patch_id)}; echo done`
    world.model.setScript("forge", {
      turns: [{ steps: [{ tool: "sandbox_shell", args: { command: forge } }, { text: "Tried." }] }],
    })
    const attacker = structured(
      await client.callTool({
        name: "worker",
        arguments: { cwd, task: "Forge. [script:forge]", isolation: "worktree" },
      }),
    )
    expect(attacker.commands).toHaveLength(1)
    expect(existsSync(discardedFile(dir, waiting.patch_id))).toBe(false)
    expect((await listed(client, cwd)).patches?.map((patch) => [patch.patch_id, patch.state])).toContainEqual([
      waiting.patch_id,
      "waiting",
    ])
    // Control: the same command on the host, outside the sandbox, does write the tombstone.
    expect((await Bun.$`sh -c ${forge}`.quiet()).exitCode).toBe(0)
    expect(existsSync(discardedFile(dir, waiting.patch_id))).toBe(true)
    // ...and even then the stored record wins: the patch is listed waiting and discarded for real.
    expect((await listed(client, cwd)).patches?.map((patch) => [patch.patch_id, patch.state])).toContainEqual([
      waiting.patch_id,
      "waiting",
    ])
    expect(text(await discard(client, waiting.patch_id))).toStartWith(`Discarded patch ${waiting.patch_id}`)
    expect((await discard(client, String((attacker.patch as { patch_id: string }).patch_id))).isError).toBeFalsy()
  } finally {
    await close()
  }
}, 180_000)
