import { describe, expect, test } from "bun:test"
import type { InstallManifest } from "../../src/install/manifest"
import {
  reconcileClients,
  reconcileFiles,
  type ClientState,
  type DesiredFile,
  type Observed,
} from "../../src/install/plan"

const A = "a".repeat(64)
const B = "b".repeat(64)
const C = "c".repeat(64)
const want = (path: string, sha256: string, owner: DesiredFile["owner"] = "opencode"): DesiredFile => ({
  path,
  owner,
  sha256,
  mode: 0o644,
  source: { text: "x" },
})
const manifest = (files: Array<[string, string, InstallManifest["files"][number]["owner"]?]>): InstallManifest => ({
  version: 1,
  appVersion: "0",
  installedAt: "t",
  integrations: [],
  registrations: {},
  files: files.map(([path, sha256, owner]) => ({ path, sha256, owner: owner ?? "opencode" })),
})

describe("reconcileFiles", () => {
  const cases: Array<{ name: string; desired: DesiredFile[]; observed: Observed; expected: Array<[string, string]> }> =
    [
      { name: "absent → write (new)", desired: [want("/f", A)], observed: { onDisk: {} }, expected: [["write", "/f"]] },
      {
        name: "identical → keep",
        desired: [want("/f", A)],
        observed: { onDisk: { "/f": A } },
        expected: [["keep", "/f"]],
      },
      {
        name: "ours, unmodified, outdated → write (update)",
        desired: [want("/f", B)],
        observed: { manifest: manifest([["/f", A]]), onDisk: { "/f": A } },
        expected: [["write", "/f"]],
      },
      {
        name: "ours, modified locally → preserve",
        desired: [want("/f", B)],
        observed: { manifest: manifest([["/f", A]]), onDisk: { "/f": C } },
        expected: [["preserve", "/f"]],
      },
      {
        name: "not ours (no manifest) → preserve, never overwritten silently",
        desired: [want("/f", B)],
        observed: { onDisk: { "/f": C } },
        expected: [["preserve", "/f"]],
      },
      {
        name: "payload under current/ is replaced even without a record",
        desired: [want("/bin", B, "core")],
        observed: { onDisk: { "/bin": C } },
        expected: [["write", "/bin"]],
      },
      {
        name: "no longer wanted, unmodified → remove",
        desired: [],
        observed: { manifest: manifest([["/old", A]]), onDisk: { "/old": A } },
        expected: [["remove", "/old"]],
      },
      {
        name: "no longer wanted, modified → leave",
        desired: [],
        observed: { manifest: manifest([["/old", A]]), onDisk: { "/old": C } },
        expected: [["leave", "/old"]],
      },
      {
        name: "no longer wanted, already gone → nothing",
        desired: [],
        observed: { manifest: manifest([["/old", A]]), onDisk: { "/old": null } },
        expected: [],
      },
    ]
  for (const c of cases)
    test(c.name, () => {
      const steps = reconcileFiles(c.desired, c.observed).map((s) => [s.action, "file" in s ? s.file.path : s.path])
      expect(steps).toEqual(c.expected)
    })
})

describe("reconcileClients", () => {
  const entry = { command: "/data/opencode-mcp-orchestrator/current/bin/x", args: ["serve"], timeoutSec: 1500 }
  const state = (matching: string[] = []): ClientState => ({
    entry,
    isOurs: (cmd) => cmd.startsWith("/data/"),
    matches: (c) => matching.includes(c),
  })
  const ours = { command: entry.command }
  const foreign = { command: "/usr/local/bin/someone-else" }
  const cases: Array<{
    name: string
    selected: ("codex" | "claude")[]
    previous: ("codex" | "claude")[]
    observed: Observed
    matching?: string[]
    expected: string[]
  }> = [
    {
      name: "selected, absent → register",
      selected: ["codex"],
      previous: [],
      observed: { onDisk: {} },
      expected: ["register codex"],
    },
    {
      name: "selected, already right → unchanged (idempotent)",
      selected: ["codex"],
      previous: ["codex"],
      observed: { onDisk: {}, codexEntry: ours },
      matching: ["codex"],
      expected: ["unchanged codex"],
    },
    {
      name: "deselected and ours → unregister",
      selected: ["claude"],
      previous: ["codex"],
      observed: { onDisk: {}, codexEntry: ours },
      expected: ["unregister codex", "register claude"],
    },
    {
      name: "deselected but someone else's → foreign, untouched",
      selected: [],
      previous: ["codex"],
      observed: { onDisk: {}, codexEntry: foreign },
      expected: ["foreign codex"],
    },
    {
      name: "never ours and not selected → nothing",
      selected: [],
      previous: [],
      observed: { onDisk: {}, claudeEntry: foreign },
      expected: [],
    },
  ]
  for (const c of cases)
    test(c.name, () => {
      const steps = reconcileClients(c.selected, c.previous, c.observed, state(c.matching)).map(
        (s) => `${s.action} ${s.client}`,
      )
      expect(steps).toEqual(c.expected)
    })
})
