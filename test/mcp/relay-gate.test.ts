// How many asks reach the person at once (src/mcp/relay-gate.ts), driven directly: asks from many
// tasks racing for forms. The same bounds through the real OpenCode are in relay.test.ts.
import { describe, expect, test } from "bun:test"
import { RelayGate, type AskLedger } from "../../src/mcp/relay-gate"
import { RELAY_BOUNDS } from "../../src/policy/relay-bounds"

const never = new AbortController().signal
type Entry = Awaited<ReturnType<RelayGate["enter"]>>
const released = (entry: Entry) => ("release" in entry ? entry.release : undefined)

/** Enters `count` asks for `ledger` and reports which were admitted so far. */
function ask(gate: RelayGate, ledger: AskLedger, count: number, signal = never) {
  const admitted: Entry[] = []
  const entries = Array.from({ length: count }, () =>
    gate.enter(ledger, signal).then((entry) => {
      admitted.push(entry)
      return entry
    }),
  )
  return { admitted, entries }
}

describe("the relay gate", () => {
  test("one task: one form open, four waiting in order, the sixth and later refused at once with the reason", async () => {
    const gate = new RelayGate()
    const ledger = gate.ledger()
    const { admitted, entries } = ask(gate, ledger, 25)
    await Bun.sleep(0)
    const refusals = admitted.filter((entry) => "refused" in entry)
    expect(refusals).toHaveLength(20)
    expect((refusals[0] as { refused: string }).refused).toContain(
      "5 asks from this task are already open or waiting for the person",
    )
    expect(admitted.filter((entry) => "release" in entry)).toHaveLength(1)
    expect(ledger).toEqual({ asked: 5, open: 1 })
    // Each answer lets the next one through, one at a time.
    for (let n = 2; n <= 5; n++) {
      released(admitted.filter((entry) => "release" in entry).at(-1)!)!()
      await Bun.sleep(0)
      expect(admitted.filter((entry) => "release" in entry)).toHaveLength(n)
      expect(ledger.open).toBe(1)
    }
    await Promise.all(entries)
  })

  test("across tasks: at most four forms open in the server; the rest wait and go out as forms close", async () => {
    const gate = new RelayGate()
    const ledgers = Array.from({ length: 6 }, () => gate.ledger())
    const asks = ledgers.map((ledger) => ask(gate, ledger, 1))
    await Bun.sleep(0)
    const open = () => asks.filter((a) => a.admitted.length).length
    expect(open()).toBe(RELAY_BOUNDS.openPerProcess)
    released(asks[0]!.admitted[0]!)!()
    await Bun.sleep(0)
    expect(open()).toBe(5)
    expect(asks[4]!.admitted).toHaveLength(1)
    expect(asks[5]!.admitted).toHaveLength(0)
  })

  test("a task's total: after 20 asks in its life (all its turns), the next is refused however few are open", async () => {
    const gate = new RelayGate()
    const ledger = gate.ledger()
    gate.remember("task-1", ledger)
    for (let n = 0; n < RELAY_BOUNDS.asksPerTask; n++) {
      const entry = await gate.enter(gate.ledger("task-1"), never)
      released(entry)!()
    }
    const over = await gate.enter(gate.ledger("task-1"), never)
    expect(over).toEqual({ refused: expect.stringContaining("already put 20 asks to the person") })
    // Control: another task is not charged for this one's asks.
    expect("release" in (await gate.enter(gate.ledger("task-2"), never))).toBe(true)
  })

  test("an ask whose wait ends (timeout, cancel) leaves the line and takes no slot with it", async () => {
    const gate = new RelayGate()
    const ledger = gate.ledger()
    const first = await gate.enter(ledger, never)
    const stop = new AbortController()
    const waiting = gate.enter(ledger, stop.signal)
    stop.abort()
    expect(await waiting).toEqual({ refused: "aborted" })
    released(first)!()
    expect(ledger.open).toBe(0)
    const next = await gate.enter(ledger, never)
    expect("release" in next).toBe(true)
    expect(ledger).toEqual({ asked: 3, open: 1 })
  })
})
