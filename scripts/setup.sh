#!/usr/bin/env bash
# Sets up everything on a fresh Debian machine with Node.js and npm, then runs the demo:
#   bash scripts/setup.sh            (add --no-demo to stop after building)
# Installs: bun (npm), the project's dependencies with the pinned OpenCode (bun install), ripgrep,
# git and tmux when missing, Debian's bubblewrap kept as /usr/bin/bwrap.debian (the tests' control for
# the GHSA-pxhw-h44j-8pfx escape), bubblewrap >= 0.12.0 at /usr/bin/bwrap (scripts/install-bwrap.sh),
# then builds dist/. Everything the test suite needs is installed here: `bun run test` after this passes.
set -euo pipefail
cd "$(dirname "$0")/.."
BUN_VERSION=1.4.5

if [ "$(id -u)" -eq 0 ]; then SUDO=""; else SUDO="sudo"; fi

if ! command -v bun >/dev/null 2>&1 || [ "$(bun --version)" != "$BUN_VERSION" ]; then
  echo "==> installing bun $BUN_VERSION from npm"
  $SUDO npm install -g --allow-scripts=bun "bun@$BUN_VERSION" >/dev/null
fi

echo "==> installing dependencies (pinned opencode-ai, MCP and OpenCode SDKs, clients for tests)"
bun install --frozen-lockfile

# OpenCode's grep and glob use rg from PATH (it cannot download it offline); git is the workspace's
# source of truth for what a delegation changed.
missing=""
command -v rg >/dev/null 2>&1 || missing="$missing ripgrep"
command -v git >/dev/null 2>&1 || missing="$missing git"
# tmux: the terminal the `watch` test drives OpenCode's UI in.
command -v tmux >/dev/null 2>&1 || missing="$missing tmux"
# wget: install.sh's second downloader, which its test exercises when curl is missing.
command -v wget >/dev/null 2>&1 || missing="$missing wget"
if [ -n "$missing" ]; then
  echo "==> installing$missing from Debian's packages"
  $SUDO apt-get update -qq >/dev/null
  $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $missing >/dev/null
fi

echo "==> bubblewrap"
# Debian's own bubblewrap (0.8.0) first: install-bwrap.sh then diverts it to /usr/bin/bwrap.debian and
# installs 0.12.0 as /usr/bin/bwrap. The sandbox tests run their GHSA-pxhw-h44j-8pfx control on 0.8.0 to
# show the escape that the host-side checks refuse. Once diverted, the package lands at bwrap.debian.
if [ ! -e /usr/bin/bwrap.debian ]; then
  $SUDO apt-get update -qq >/dev/null
  $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq bubblewrap >/dev/null
fi
$SUDO bash scripts/install-bwrap.sh

echo "==> building dist/"
bun run build

if [ "${1:-}" != "--no-demo" ]; then
  echo "==> demo: a scout delegation on the scripted model"
  PATH="$PWD/node_modules/.bin:$PATH" ./dist/opencode-mcp-orchestrator demo
fi
