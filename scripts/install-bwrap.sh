#!/usr/bin/env bash
# Installs bubblewrap at /usr/bin/bwrap (Debian's package).
set -euo pipefail
command -v bwrap >/dev/null 2>&1 || DEBIAN_FRONTEND=noninteractive apt-get install -y bubblewrap >/dev/null
bwrap --version
