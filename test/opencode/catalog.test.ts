// Both ways of reading OpenCode's model catalog give the same models: the server's provider list and
// `opencode models --verbose` (an id line, then that model's JSON), sorted by id, the name falling
// back to the model's own id and variants to none.
import { describe, expect, test } from "bun:test"
import type { OpencodeClient } from "@opencode-ai/sdk/v2"
import { parseModels, readCatalog } from "../../src/opencode/catalog"

const M = {
  id: "m",
  name: "Model M",
  providerID: "local",
  variants: { low: { reasoningEffort: "low" }, high: { reasoningEffort: "high" } },
}
const N = { id: "n", providerID: "local", capabilities: { toolcall: true } }
const READ_M = { id: "local/m", name: "Model M", variants: ["low", "high"] }
const READ_N = { id: "local/n", name: "n", variants: [] }
const EXPECTED = [READ_M, READ_N]

describe("opencode models --verbose", () => {
  test.each([
    [
      "two models, out of order, JSON pretty-printed",
      `local/n\n${JSON.stringify(N, null, 2)}\nlocal/m\n${JSON.stringify(M, null, 2)}\n`,
      EXPECTED,
    ],
    [
      "a model id containing a slash after the provider",
      `openrouter/vendor/big\n{"name":"Big"}\n`,
      [{ id: "openrouter/vendor/big", name: "Big", variants: [] }],
    ],
    ["JSON that does not parse keeps the id", "local/m\n{ not json\n", [{ id: "local/m", name: "m", variants: [] }]],
    [
      "log lines before the first id are ignored",
      `INFO starting\n{"stray": true}\nlocal/n\n${JSON.stringify(N)}\n`,
      [READ_N],
    ],
    ["no models", "", []],
  ])("%s", (_, output, models) => {
    expect(parseModels(output)).toEqual(models)
  })
})

test("the server's provider list reads to the same models", async () => {
  const client = {
    config: {
      providers: async () => ({
        data: { providers: [{ id: "local", models: { n: N, m: M } }], default: { local: "m" } },
      }),
    },
  } as unknown as OpencodeClient
  expect(await readCatalog(client)).toEqual({ models: EXPECTED, defaults: { local: "m" } })
})
