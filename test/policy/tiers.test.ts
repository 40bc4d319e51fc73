import { describe, expect, test } from "bun:test"
import { checkTier, type Tier } from "../../src/policy/tiers"

const cases: [Tier | undefined, boolean, boolean][] = [
  // [tier, requireTier, refused]
  [undefined, false, false],
  [undefined, true, true],
  ["easy", false, false],
  ["medium", true, false],
  ["hard", false, true],
  ["unsure", false, true],
  ["hard", true, true],
]

describe("checkTier", () => {
  test.each(cases)("tier %p with requireTier %p: refused = %p", (tier, requireTier, refused) => {
    const refusal = checkTier(tier, requireTier)
    expect(refusal !== undefined).toBe(refused)
    if (refusal) expect(refusal.rule).toBe("tier")
  })

  test("hard and unsure tell the parent to do the work itself", () => {
    for (const tier of ["hard", "unsure"] as const)
      expect(checkTier(tier, false)!.next).toContain("Do this work yourself")
  })
})
