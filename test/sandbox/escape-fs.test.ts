// Escape battery, filesystem half: secrets outside the workspace, writes outside it, Git metadata,
// symlink and `..` tricks. Every attempt runs on the real /usr/bin/bwrap in each profile that must
// deny it, with a control outside the sandbox that must succeed.
import { existsSync, readFileSync, symlinkSync } from "node:fs"
import { EVERY, READ_ONLY, runBattery, WRITABLE, type Attempt } from "./_battery"

const ID = `${process.pid}-${Date.now()}`
const has = (path: string, text: string) => existsSync(path) && readFileSync(path, "utf8").includes(text)

const reads: Attempt[] = [
  { name: "read a fake ~/.ssh key", profiles: EVERY, script: "grep -q FAKE-SSH-KEY {HOME}/.ssh/id_ed25519" },
  { name: "read fake ~/.aws/credentials", profiles: EVERY, script: "grep -q FAKE-AWS {HOME}/.aws/credentials" },
  {
    name: "read OpenCode's auth.json",
    profiles: EVERY,
    script: "grep -q FAKE-OPENCODE {HOME}/.local/share/opencode/auth.json",
  },
  { name: "read /etc/shadow", profiles: EVERY, script: "grep -q '^root:' /etc/shadow" },
  { name: "list /root", profiles: EVERY, script: "ls -A /root | grep -q ." },
  { name: "read a file outside the workspace", profiles: EVERY, script: "grep -q OUTSIDE-SECRET {OUT}/secret.txt" },
  { name: "read outside via ..", profiles: EVERY, script: "cd {WS} && grep -q OUTSIDE-SECRET ../outside/secret.txt" },
  {
    name: "read /etc/shadow via /proc/self/root",
    profiles: EVERY,
    script: "grep -q '^root:' /proc/self/root/etc/shadow",
  },
  {
    name: "read through a workspace symlink to a file outside",
    profiles: EVERY,
    setup: (fx) => symlinkSync(`${fx.outside}/secret.txt`, `${fx.workspace}/leak`),
    script: "grep -q OUTSIDE-SECRET {WS}/leak",
  },
  {
    name: "read through a workspace symlink to ~/.ssh",
    profiles: EVERY,
    setup: (fx) => symlinkSync(`${fx.home}/.ssh`, `${fx.workspace}/keys`),
    script: "grep -q FAKE-SSH-KEY {WS}/keys/id_ed25519",
  },
  {
    name: "read through a relative ../.. symlink",
    profiles: EVERY,
    setup: (fx) => symlinkSync("../home/.aws/credentials", `${fx.workspace}/creds`),
    script: "grep -q FAKE-AWS {WS}/creds",
  },
]

const writes: Attempt[] = [
  {
    name: "write a file outside the workspace",
    profiles: EVERY,
    script: "echo x > {OUT}/pwned",
    evidence: (fx) => existsSync(`${fx.outside}/pwned`),
  },
  {
    name: "write into the fake HOME",
    profiles: EVERY,
    script: "echo x > {HOME}/pwned",
    evidence: (fx) => existsSync(`${fx.home}/pwned`),
  },
  {
    name: "write outside via ..",
    profiles: EVERY,
    script: "echo x > {WS}/../pwned",
    evidence: (fx) => existsSync(`${fx.root}/pwned`),
  },
  {
    name: "write the host's /tmp",
    profiles: EVERY,
    script: `echo x > /tmp/orch-leak-${ID}`,
    evidence: () => existsSync(`/tmp/orch-leak-${ID}`),
    cleanup: [`/tmp/orch-leak-${ID}`],
  },
  {
    name: "write under /usr",
    profiles: EVERY,
    script: `touch /usr/local/orch-pwned-${ID}`,
    evidence: () => existsSync(`/usr/local/orch-pwned-${ID}`),
    cleanup: [`/usr/local/orch-pwned-${ID}`],
  },
  {
    name: "write the root directory",
    profiles: EVERY,
    script: `touch /orch-pwned-${ID}`,
    evidence: () => existsSync(`/orch-pwned-${ID}`),
    cleanup: [`/orch-pwned-${ID}`],
  },
  {
    name: "write out through a symlink the command creates",
    profiles: WRITABLE,
    script: "ln -s {OUT} {WS}/out-link && echo x > {WS}/out-link/pwned",
    evidence: (fx) => existsSync(`${fx.outside}/pwned`),
  },
  {
    name: "write the read-only workspace",
    profiles: READ_ONLY,
    script: "echo x > {WS}/pwned",
    evidence: (fx) => existsSync(`${fx.workspace}/pwned`),
  },
  {
    name: "delete from the read-only workspace",
    profiles: READ_ONLY,
    script: "rm {WS}/a.txt",
    evidence: (fx) => !existsSync(`${fx.workspace}/a.txt`),
  },
]

const gitMetadata: Attempt[] = [
  {
    name: "add an fsmonitor command to .git/config",
    profiles: EVERY,
    script: "printf '[core]\\n\\tfsmonitor = touch /tmp/fsmon\\n' >> {WS}/.git/config",
    evidence: (fx) => has(`${fx.workspace}/.git/config`, "fsmonitor"),
  },
  {
    name: "install a .git/hooks/pre-commit hook",
    profiles: EVERY,
    script: "printf '#!/bin/sh\\ntouch /tmp/hooked\\n' > {WS}/.git/hooks/pre-commit",
    evidence: (fx) => existsSync(`${fx.workspace}/.git/hooks/pre-commit`),
  },
  {
    name: "rename .git away and plant a new one",
    profiles: EVERY,
    script: "mv {WS}/.git {WS}/.git-old && mkdir {WS}/.git",
    evidence: (fx) => existsSync(`${fx.workspace}/.git-old`),
  },
  {
    name: "delete .git/refs",
    profiles: EVERY,
    script: "rm -rf {WS}/.git/refs",
    evidence: (fx) => !existsSync(`${fx.workspace}/.git/refs`),
  },
  {
    name: "write a worktree's gitdir target",
    profiles: EVERY,
    useWorktree: true,
    script: "echo x > \"$(sed 's/^gitdir: //' {WT}/.git)/pwned\"",
    evidence: (fx) => existsSync(`${fx.workspace}/.git/worktrees/wt/pwned`),
  },
  {
    name: "write a worktree's common dir config",
    profiles: EVERY,
    useWorktree: true,
    script: "printf '[core]\\n\\thooksPath = /tmp\\n' >> {WS}/.git/config",
    evidence: (fx) => has(`${fx.workspace}/.git/config`, "hooksPath"),
  },
  {
    name: "rewrite a worktree's .git pointer",
    profiles: EVERY,
    useWorktree: true,
    script: "echo 'gitdir: {OUT}' > {WT}/.git",
    evidence: (fx) => has(`${fx.worktree}/.git`, fx.outside),
  },
]

runBattery("escape battery: filesystem", [...reads, ...writes, ...gitMetadata])
