#!/usr/bin/env bash
# Ensures /usr/bin/bwrap is bubblewrap >= 0.12.0. Run as root (scripts/setup.sh and CI call it).
#
# Why build: Debian 12 ships 0.8.0, which has the GHSA-pxhw-h44j-8pfx symlink-parent escape. Debian 13's
# trixie-security carries 0.12.0 as a source package that builds on Debian 12 with gcc and libcap-dev, so
# we fetch Debian's own source with apt (signed by the Debian archive keyring), build the upstream tree
# with Debian's patches applied, and install the one binary as /usr/bin/bwrap.
# Idempotent: does nothing when a safe version is already installed. Quiet on success; prints the version.
set -euo pipefail

MIN_VERSION=0.12.0
BWRAP=/usr/bin/bwrap
SOURCES=/etc/apt/sources.list.d/opencode-mcp-orchestrator-bwrap-src.sources
KEYRING=/usr/share/keyrings/debian-archive-keyring.gpg
export DEBIAN_FRONTEND=noninteractive

version_of() { "$1" --version 2>/dev/null | awk '{print $2}'; }
# True when $1 >= $2 in Debian's version order (dpkg is always present on Debian).
at_least() { dpkg --compare-versions "$1" ge "$2"; }

if [ -x "$BWRAP" ] && at_least "$(version_of "$BWRAP")" "$MIN_VERSION"; then
  echo "bwrap $(version_of "$BWRAP") at $BWRAP"
  exit 0
fi

if [ "$(id -u)" -ne 0 ]; then
  echo "install-bwrap.sh: run as root (it installs packages and writes $BWRAP)" >&2
  exit 1
fi

log="$(mktemp /tmp/install-bwrap.XXXXXX.log)"
work="$(mktemp -d /tmp/install-bwrap.XXXXXX)"
trap 'rm -rf "$work"' EXIT
# Quiet on success; on failure show what the failing step printed.
quietly() {
  if ! "$@" >>"$log" 2>&1; then
    echo "install-bwrap.sh: failed: $*" >&2
    tail -n 40 "$log" >&2
    echo "(full log: $log)" >&2
    exit 1
  fi
}

[ -f "$KEYRING" ] || quietly apt-get install -y debian-archive-keyring

# Source entries only: nothing from trixie can be installed as a binary package through this file.
cat >"$SOURCES" <<EOF
Types: deb-src
URIs: http://deb.debian.org/debian-security
Suites: trixie-security
Components: main
Signed-By: $KEYRING
EOF

quietly apt-get update
# Build tools from the running release. man pages and tests are switched off, so no xsltproc/docbook.
quietly apt-get install -y --no-install-recommends dpkg-dev gcc libc6-dev meson ninja-build pkg-config libcap-dev

cd "$work"
# `_apt` cannot write into a root-only mktemp dir; fetch as root without the sandboxed downloader.
quietly apt-get -o APT::Sandbox::User=root source bubblewrap/trixie-security
srcdir="$(find . -maxdepth 1 -mindepth 1 -type d -name 'bubblewrap-*' | head -n 1)"
[ -n "$srcdir" ] || { echo "install-bwrap.sh: apt-get source produced no bubblewrap-* tree" >&2; exit 1; }

quietly meson setup build "$srcdir" --prefix=/usr --buildtype=release \
  -Dman=disabled -Dtests=false -Dselinux=disabled -Dbash_completion=disabled -Dzsh_completion=disabled
quietly ninja -C build bwrap

built="$work/build/bwrap"
v="$(version_of "$built")"
at_least "$v" "$MIN_VERSION" || { echo "install-bwrap.sh: built bwrap $v is older than $MIN_VERSION" >&2; exit 1; }

# Divert Debian's /usr/bin/bwrap so installing or upgrading the bubblewrap 0.8.x package later puts its
# binary beside ours (bwrap.debian) instead of silently replacing the safe one.
quietly dpkg-divert --local --rename --divert /usr/bin/bwrap.debian --add "$BWRAP"
install -m 0755 -o root -g root "$built" "$BWRAP"
rm -f "$log"
echo "bwrap $(version_of "$BWRAP") at $BWRAP (built from Debian's trixie-security source)"
