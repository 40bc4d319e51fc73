// The sampler's counting rule on sweeps as they were seen: the hand-over that once read as three busy
// sessions under a cap of two is not counted, and a real overrun still is.
import { expect, test } from "bun:test"
import { overlapping, type Sweep } from "./busy"

const sweep = (busy: Record<string, string[]>): Sweep =>
  new Map(Object.entries(busy).map(([directory, ids]) => [directory, new Set(ids)]))

interface Case {
  name: string
  previous: Record<string, string[]>
  current: Record<string, string[]>
  expected: { perWorkspace: number; total: number }
}

const cases: Case[] = [
  {
    name: "a hand-over between two answers of one sweep (a ends, c starts): two, not three",
    previous: { w1: ["a"], w2: ["b"] },
    current: { w1: ["a"], w2: ["b"], w3: ["c"] },
    expected: { perWorkspace: 1, total: 2 },
  },
  {
    name: "attack: three sessions busy in two consecutive sweeps are counted three",
    previous: { w1: ["a"], w2: ["b"], w3: ["c"] },
    current: { w1: ["a"], w2: ["b"], w3: ["c"] },
    expected: { perWorkspace: 1, total: 3 },
  },
  {
    name: "attack: two sessions busy in one workspace in both sweeps are counted two there",
    previous: { w1: ["a", "b"] },
    current: { w1: ["a", "b"] },
    expected: { perWorkspace: 2, total: 2 },
  },
  {
    name: "the first sweep alone counts nothing",
    previous: {},
    current: { w1: ["a"] },
    expected: { perWorkspace: 0, total: 0 },
  },
]

test.each(cases)("$name", ({ previous, current, expected }) => {
  expect(overlapping(sweep(previous), sweep(current))).toEqual(expected)
})
