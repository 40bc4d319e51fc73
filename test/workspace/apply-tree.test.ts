// The pure cores recovery decides with: a sealed file's check (every cut and every changed byte of a
// journal fails it; the previous version's unsealed JSON is told apart), and where a path stands
// against a patch's before and after images. Control: the intact sealed file passes, and each state
// is reachable, so the tables can fail.
import { expect, test } from "bun:test"
import { imagesOf, outcomeOf, stateOf, type PathState } from "../../src/workspace/write-step/apply-tree"
import { seal, stateJson, STATE_KIND, unseal } from "../../src/util/sealed"

const KIND = "oc-orch-journal/2"
const body = JSON.stringify({ workspace: "/repo", files: [{ path: "a.txt", newOid: "1".repeat(40) }], temps: [] })
const sealed = seal(KIND, body)

test("control: a sealed file reads back whole", () => {
  expect(unseal(KIND, sealed)).toEqual({ kind: "sound", body })
})

test("every cut of a sealed file fails its check", () => {
  for (let at = 0; at < sealed.length; at++) expect(unseal(KIND, sealed.slice(0, at)).kind).toBe("damaged")
})

test("every changed byte of a sealed file fails its check, even where the body stays JSON", () => {
  for (let at = 0; at < sealed.length; at++) {
    const changed = `${sealed.slice(0, at)}${sealed[at] === "1" ? "2" : "1"}${sealed.slice(at + 1)}`
    expect(unseal(KIND, changed).kind).toBe("damaged")
  }
})

test("a sealed file of another kind, and garbage, are damaged; the previous version's JSON is unsealed", () => {
  expect(unseal(KIND, seal(STATE_KIND, body))).toMatchObject({ kind: "damaged" })
  expect(unseal(KIND, "\u0000\u0001garbage")).toMatchObject({ kind: "damaged" })
  expect(unseal(KIND, body)).toEqual({ kind: "unsealed", text: body })
  // A state file: a plain one reads as it is, a sealed one that fails says why.
  expect(stateJson(body)).toEqual({ json: body })
  expect(stateJson(seal(STATE_KIND, body).replace("/repo", "/repx"))).toMatchObject({ problem: expect.any(String) })
})

const A = { mode: "100644", oid: "a".repeat(40) }
const B = { mode: "100644", oid: "b".repeat(40) }
const C = { mode: "100644", oid: "c".repeat(40) }

test("a path's state against its images: before, after, missing, changed", () => {
  const modified = { path: "m", before: A, after: B }
  const cases: Array<[typeof A | undefined, PathState]> = [
    [A, "before"],
    [B, "after"],
    [undefined, "missing"],
    [C, "changed"],
  ]
  for (const [now, state] of cases) expect(stateOf(modified, now)).toBe(state)
  // An added file: nothing is its before; a deleted one: nothing is its after.
  expect(stateOf({ path: "n", before: undefined, after: B }, undefined)).toBe("before")
  expect(stateOf({ path: "d", before: A, after: undefined }, undefined)).toBe("after")
})

test("a rename is two paths, its source going and its target coming; outcomes from the states", () => {
  const images = imagesOf([
    { path: "new", oldPath: "old", oldMode: A.mode, oldOid: A.oid, newMode: A.mode, newOid: A.oid },
  ])
  expect(images).toEqual([
    { path: "old", before: A, after: undefined },
    { path: "new", before: undefined, after: A },
  ])
  expect(
    outcomeOf([
      { path: "old", state: "after" },
      { path: "new", state: "after" },
    ]).outcome,
  ).toBe("rolled-forward")
  expect(
    outcomeOf([
      { path: "old", state: "before" },
      { path: "new", state: "before" },
    ]).outcome,
  ).toBe("rolled-back")
  expect(
    outcomeOf([
      { path: "old", state: "after" },
      { path: "new", state: "before" },
    ]),
  ).toEqual({
    outcome: "mixed",
    before: ["new"],
    after: ["old"],
    missing: [],
    changed: [],
  })
})
