#!/bin/sh
# Bootstrap installer for opencode-mcp-orchestrator @@VERSION@@ (rendered for @@REPOSITORY@@).
#   curl -fsSL https://github.com/@@REPOSITORY@@/releases/download/v@@VERSION@@/install.sh | sh
#   curl -fsSL …/install.sh | sh -s -- --yes [install flags]
# Downloads SHA256SUMS and the archive for this machine, verifies the checksum and every archive
# entry, extracts into a fresh temporary directory, then hands over to `opencode-mcp-orchestrator
# install`. Nothing outside that temporary directory is touched before the checks pass.
# OPENCODE_MCP_ORCHESTRATOR_RELEASE_BASE overrides the download base URL (mirrors, tests).
set -eu

APP=opencode-mcp-orchestrator
VERSION='@@VERSION@@'
BASE="${OPENCODE_MCP_ORCHESTRATOR_RELEASE_BASE:-@@RELEASE_BASE@@}"
BASE="${BASE%/}"

# Every refusal is exactly one line on stderr and a non-zero exit.
die() {
  printf 'install.sh: %s\n' "$*" >&2
  exit 1
}
say() { printf '%s\n' "$*"; }

need() {
  command -v "$1" >/dev/null 2>&1 || die "$1 is required but was not found on PATH"
}

case "$(uname -m)" in
  x86_64 | amd64) ARCH=x64 ;;
  aarch64 | arm64) ARCH=arm64 ;;
  *) die "unsupported architecture '$(uname -m)': releases exist for x86_64 and aarch64 Linux" ;;
esac
[ "$(uname -s)" = Linux ] || die "unsupported system '$(uname -s)': releases exist for Linux only"

STEM="$APP-$VERSION-linux-$ARCH"
ARCHIVE="$STEM.tar.gz"

need tar
need gzip
need mktemp
need awk
if command -v sha256sum >/dev/null 2>&1; then
  sha256() { sha256sum "$1" | awk '{ print $1 }'; }
elif command -v shasum >/dev/null 2>&1; then
  sha256() { shasum -a 256 "$1" | awk '{ print $1 }'; }
else
  die "sha256sum or shasum is required but neither was found on PATH"
fi

# Plain http is allowed only when the base was overridden (a loopback test server or a mirror);
# the default GitHub URL and its redirects stay https-only.
case "$BASE" in
  https://*) PROTO='=https' ;;
  *) PROTO='=http,https' ;;
esac
if command -v curl >/dev/null 2>&1; then
  fetch() { curl -fsL --proto "$PROTO" --proto-redir "$PROTO" --retry 2 -o "$2" "$1"; }
elif command -v wget >/dev/null 2>&1; then
  # GNU wget records HSTS hosts in ~/.wget-hsts; pointing HOME at the temp dir keeps HOME untouched
  # (--no-hsts would do it too, but older and busybox wgets reject the option).
  fetch() { HOME="$WORK" wget -q -O "$2" "$1"; }
else
  die "curl or wget is required but neither was found on PATH"
fi

WORK="$(mktemp -d)" || die "cannot create a temporary directory"
cleanup() { rm -rf "$WORK"; }
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM HUP

say "Downloading $APP $VERSION for linux-$ARCH from $BASE"
fetch "$BASE/SHA256SUMS" "$WORK/SHA256SUMS" || die "download failed: $BASE/SHA256SUMS"
fetch "$BASE/$ARCHIVE" "$WORK/$ARCHIVE" || die "download failed: $BASE/$ARCHIVE"

# Exactly one line naming this archive, with a well-formed hash: duplicates, a missing entry or a
# malformed line are refused rather than guessed at.
EXPECTED="$(awk -v name="$ARCHIVE" '
  { file = $2; sub(/^\*/, "", file) }
  file == name { count++; hash = $1 }
  END {
    if (count != 1) exit 1
    if (length(hash) != 64 || hash ~ /[^0-9a-fA-F]/) exit 2
    print tolower(hash)
  }' "$WORK/SHA256SUMS")" || die "SHA256SUMS must hold exactly one well-formed line for $ARCHIVE"
ACTUAL="$(sha256 "$WORK/$ARCHIVE")"
[ "$ACTUAL" = "$EXPECTED" ] || die "checksum mismatch for $ARCHIVE: expected $EXPECTED, got $ACTUAL"
say "Checksum verified"

# Read every entry before extracting anything. Names come from `tar -t`, types and link targets
# from `tar -tv` (same order). Allowed: regular files and directories under one top-level
# directory, and links whose target is relative without any `..`: checking a `..` target
# lexically is unsound once links chain, so any `..` is refused, not resolved.
# GNU tar rewrites some unsafe names while listing (it strips a leading `../` from hard link
# targets and says so on stderr), so any warning left after the checks below is a refusal too.
tar -tzf "$WORK/$ARCHIVE" >"$WORK/names" 2>"$WORK/warnings" || die "cannot list $ARCHIVE: not a gzip-compressed tar archive"
tar -tvzf "$WORK/$ARCHIVE" >"$WORK/listing" 2>>"$WORK/warnings" || die "cannot list $ARCHIVE: not a gzip-compressed tar archive"
REASON="$(awk -v names="$WORK/names" -v top="$STEM" '
  function bad(msg) { print msg; failed = 1; exit 1 }
  function escapes(path,   parts, n, i) {
    if (path ~ /^\//) return "absolute path"
    n = split(path, parts, "/")
    for (i = 1; i <= n; i++) if (parts[i] == "..") return "\"..\" component"
    return ""
  }
  {
    if ((getline name < names) <= 0) bad("listing and names disagree")
    type = substr($0, 1, 1)
    why = escapes(name)
    if (why != "") bad("entry " name ": " why)
    first = name; sub(/^\.\//, "", first); sub(/\/.*/, "", first)
    if (first != top) bad("entry " name " is outside the top-level directory " top)
    if (type == "-" || type == "d") next
    if (type != "l" && type != "h") bad("entry " name " has unsupported type " type)
    rest = substr($0, index($0, " " name " ") + length(name) + 2)
    if (rest ~ /^-> /) target = substr(rest, 4)
    else if (rest ~ /^link to /) target = substr(rest, 9)
    else bad("entry " name ": cannot read its link target")
    if (target == "") bad("entry " name ": empty link target")
    why = escapes(target)
    if (why != "") bad("link " name " -> " target " leaves the extraction directory (" why ")")
  }
  END {
    if (failed) exit 1
    if (NR == 0) { print "archive is empty"; exit 1 }
    if ((getline extra < names) > 0) { print "listing and names disagree"; exit 1 }
  }' "$WORK/listing")" || die "refusing $ARCHIVE: ${REASON:-its listing could not be checked}"
[ ! -s "$WORK/warnings" ] || die "refusing $ARCHIVE: $(head -n 1 "$WORK/warnings")"

mkdir "$WORK/x"
tar -xzf "$WORK/$ARCHIVE" -C "$WORK/x" --no-same-owner 2>/dev/null || die "extracting $ARCHIVE failed"
BINARY="$WORK/x/$STEM/$APP"
[ -f "$BINARY" ] && [ ! -L "$BINARY" ] || die "archive $ARCHIVE has no $STEM/$APP binary"
chmod 0755 "$BINARY"
say "Archive verified and extracted; starting the installer"

# Interactive when a person can answer: stdout is a terminal and so is stdin or, when stdin is
# the script piped from curl, /dev/tty opens (the binary's wizard needs both ends). Otherwise
# non-interactive: `--yes` is added unless the caller passed it.
has_yes=0
for arg in "$@"; do
  [ "$arg" != --yes ] || has_yes=1
done
status=0
if [ "$has_yes" -eq 0 ] && [ -t 1 ] && [ -t 0 ]; then
  "$BINARY" install "$@" || status=$?
elif [ "$has_yes" -eq 0 ] && [ -t 1 ] && (: </dev/tty) 2>/dev/null; then
  "$BINARY" install "$@" </dev/tty || status=$?
elif [ "$has_yes" -eq 1 ]; then
  "$BINARY" install "$@" </dev/null || status=$?
else
  "$BINARY" install --yes "$@" </dev/null || status=$?
fi
exit "$status"
