// Escape battery, kernel half: capabilities and mounts as root (CI runs as root), host processes and
// their environment, and commands that try to outlive their timeout. Mount attacks would damage the
// host if run there, so their control is the same sandbox without `--cap-drop ALL` and the user
// namespace lock, which shows those flags are what stops them.
import { afterAll, beforeAll } from "bun:test"
import { existsSync } from "node:fs"
import { EVERY, NETLESS, READ_ONLY, runBattery, WRITABLE, type Attempt } from "./_battery"

const ID = `${process.pid}-${Date.now()}`
const SECRET_VAR = "ORCH_SANDBOX_FAKE_SECRET"
const SECRET = `fake-secret-${ID}`

// A fake credential in the test's own environment: the sandboxed command must not see it anywhere,
// including /proc/1/environ (bwrap's own environment, containers/bubblewrap#725).
beforeAll(() => {
  process.env[SECRET_VAR] = SECRET
})
afterAll(() => {
  delete process.env[SECRET_VAR]
})

const capsAndMounts: Attempt[] = [
  { name: "hold any effective capability", profiles: EVERY, script: "grep -q '^CapEff:.*[1-9a-f]' /proc/self/status" },
  {
    name: "unmount the read-only .git and write through",
    profiles: WRITABLE,
    control: "weakened",
    script: "umount {WS}/.git && echo x > {WS}/.git/pwned",
    evidence: (fx) => existsSync(`${fx.workspace}/.git/pwned`),
  },
  {
    name: "remount the read-only workspace writable",
    profiles: READ_ONLY,
    control: "weakened",
    script: "mount -o remount,bind,rw {WS} && echo x > {WS}/pwned",
    evidence: (fx) => existsSync(`${fx.workspace}/pwned`),
  },
  {
    name: "remount .git writable",
    profiles: WRITABLE,
    control: "weakened",
    script: "mount -o remount,bind,rw {WS}/.git && echo x > {WS}/.git/pwned",
    evidence: (fx) => existsSync(`${fx.workspace}/.git/pwned`),
  },
  {
    name: "remount /usr writable",
    profiles: EVERY,
    control: "weakened",
    script: `mount -o remount,bind,rw /usr && touch /usr/local/orch-remount-${ID}`,
    evidence: () => existsSync(`/usr/local/orch-remount-${ID}`),
    cleanup: [`/usr/local/orch-remount-${ID}`],
  },
  {
    name: "mount a new filesystem",
    profiles: NETLESS,
    control: "weakened",
    script: "mkdir -p /tmp/p && mount -t tmpfs none /tmp/p",
  },
  { name: "create a nested user namespace", profiles: EVERY, script: "unshare -Urm true" },
  { name: "chroot", profiles: EVERY, script: "/usr/sbin/chroot / /bin/true" },
  {
    name: "create a block device node",
    profiles: EVERY,
    script: `mknod /tmp/orch-dev-${ID} b 7 0`,
    cleanup: [`/tmp/orch-dev-${ID}`],
  },
]

const processes: Attempt[] = [
  {
    name: "read the fake secret from /proc/1/environ, /proc/self/environ or the parent's",
    profiles: EVERY,
    script: `cat /proc/1/environ /proc/self/environ /proc/$PPID/environ 2>/dev/null | tr '\\0' '\\n' | grep -q '^${SECRET_VAR}='`,
  },
  { name: "see the fake secret in the environment", profiles: EVERY, script: `env | grep -q '${SECRET_VAR}'` },
  {
    name: "see the host HOME in the environment",
    profiles: EVERY,
    script: `[ "$HOME" = "${process.env.HOME ?? "/root"}" ]`,
  },
  { name: "signal the test process", profiles: EVERY, script: `kill -0 ${process.pid}` },
  { name: "read the test process's command line", profiles: EVERY, script: `grep -q . /proc/${process.pid}/cmdline` },
  { name: "read the host's network interfaces from /sys", profiles: EVERY, script: "ls /sys/class/net | grep -q ." },
]

const marker = (name: string) => (fx: { workspace: string }) => existsSync(`${fx.workspace}/${name}`)
const outliving: Attempt[] = [
  {
    name: "background child outlives the timeout",
    profiles: WRITABLE,
    script: "( sleep 2; echo late > {WS}/late ) >/dev/null 2>&1 & exec sleep 60",
    timeoutMs: 1000,
    settleMs: 2500,
    evidence: marker("late"),
  },
  {
    name: "setsid daemon outlives the timeout",
    profiles: WRITABLE,
    script: "setsid -f bash -c 'sleep 2; echo late > {WS}/late' >/dev/null 2>&1; exec sleep 60",
    timeoutMs: 1000,
    settleMs: 2500,
    evidence: marker("late"),
  },
  {
    name: "SIGTERM-ignoring child outlives the timeout",
    profiles: WRITABLE,
    script: "trap '' TERM; ( trap '' TERM; sleep 2; echo late > {WS}/late ) >/dev/null 2>&1 & exec sleep 60",
    timeoutMs: 1000,
    settleMs: 2500,
    evidence: marker("late"),
  },
]

runBattery("escape battery: kernel and processes", [...capsAndMounts, ...processes, ...outliving])
