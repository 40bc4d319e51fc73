// Escape battery, network half: listeners the test starts on 127.0.0.1 (HTTP and raw TCP) and on an
// abstract unix socket must be unreachable from every networkless profile, and reachable from the
// runner's host-network profiles, which is what `host` promises (and why it is a separate grant).
import { afterAll, beforeAll, describe, expect, test } from "bun:test"
import { createServer, type Server } from "node:net"
import { profileName } from "../../src/sandbox/profiles"
import { NETLESS, RUN_RO_NET, RUN_RW_NET, runBattery, type Attempt } from "./_battery"
import { fill, inSandbox, makeFixture } from "./_harness"

const ABSTRACT = `orch-sandbox-test-${process.pid}-${Date.now()}`
let http: ReturnType<typeof Bun.serve> | undefined
let tcp: Bun.TCPSocketListener | undefined
let unix: Server | undefined

beforeAll(async () => {
  http = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: () => new Response("pong") })
  tcp = Bun.listen({
    hostname: "127.0.0.1",
    port: 0,
    socket: { open: (socket) => void socket.end("pong\n"), data: () => {} },
  })
  const server = createServer((socket) => socket.end("pong"))
  // A leading NUL makes it an abstract socket: no file, scoped to the network namespace.
  await new Promise<void>((resolve) => server.listen(`\0${ABSTRACT}`, resolve))
  unix = server
})

afterAll(async () => {
  await http?.stop(true)
  tcp?.stop(true)
  await new Promise<void>((resolve) => (unix ? unix.close(() => resolve()) : resolve()))
})

const ports = () => ({ HTTP_PORT: String(http?.port ?? 0), TCP_PORT: String(tcp?.port ?? 0), ABSTRACT })

const CURL = "curl -s --max-time 3 http://127.0.0.1:{HTTP_PORT}/ | grep -q pong"
const DEV_TCP = 'exec 3<>/dev/tcp/127.0.0.1/{TCP_PORT} && read -t 3 line <&3 && [ "$line" = pong ]'
const ABSTRACT_SOCKET =
  "/usr/bin/python3 -c \"import socket; s = socket.socket(socket.AF_UNIX); s.settimeout(3); s.connect('\\0{ABSTRACT}'); assert s.recv(4) == b'pong'\""

const attempts: Attempt[] = [
  { name: "HTTP to a 127.0.0.1 listener with curl", profiles: NETLESS, script: CURL },
  { name: "TCP to a 127.0.0.1 listener with bash /dev/tcp", profiles: NETLESS, script: DEV_TCP },
  { name: "connect to an abstract unix socket", profiles: NETLESS, script: ABSTRACT_SOCKET },
  {
    name: "see a network interface besides lo",
    profiles: NETLESS,
    script: "tail -n +3 /proc/net/dev | grep -qv '^ *lo:'",
  },
  { name: "read the host's resolver configuration", profiles: NETLESS, script: "grep -q . /etc/resolv.conf" },
]

runBattery("escape battery: network", attempts, ports)

describe("host network mode reaches what it promises", () => {
  const cases = [
    ["curl to 127.0.0.1", CURL],
    ["bash /dev/tcp to 127.0.0.1", DEV_TCP],
    ["an abstract unix socket", ABSTRACT_SOCKET],
    ["the resolver configuration", "grep -q . /etc/resolv.conf && grep -q localhost /etc/hosts"],
    ["the CA trust source", "test -s /etc/ssl/certs/ca-certificates.crt"],
  ] as const
  for (const profile of [RUN_RO_NET, RUN_RW_NET])
    for (const [what, script] of cases)
      test(`${profileName(profile)}: ${what}`, async () => {
        const fx = await makeFixture()
        try {
          const result = await inSandbox(profile, fx, fill(script, fx, ports()))
          expect({ code: result.exitCode, stderr: result.stderr }).toEqual({ code: 0, stderr: "" })
        } finally {
          fx.cleanup()
        }
      })
})
