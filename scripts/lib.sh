# Shared by scripts/start and scripts/test: install what is missing, quietly
# skip what is already there. Sourced, not run.

# shellcheck shell=bash
WAILS_VERSION=v2.16.0
# staticcheck, pinned like every tool (run by scripts/test and make lint).
STATICCHECK_VERSION=v0.8.2
GO_MIN=1.26
NODE_MIN=20.19

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
GOBIN_DIR=$(go env GOPATH 2>/dev/null)/bin
export PATH="$GOBIN_DIR:$PATH"

say() { printf '\033[1m==> %s\033[0m\n' "$*" >&2; }
die() { printf 'error: %s\n' "$*" >&2; exit 1; }

# as_root runs a command as root: directly when we are root, else with sudo.
as_root() {
  if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi
}

version_ge() { [ "$(printf '%s\n%s\n' "$2" "$1" | sort -V | head -n1)" = "$2" ]; }

require_toolchains() {
  command -v go >/dev/null || die "Go $GO_MIN or newer is needed: https://go.dev/dl/"
  local gov; gov=$(go env GOVERSION | sed 's/^go//')
  version_ge "$gov" "$GO_MIN" || die "Go $GO_MIN or newer is needed (found $gov)"
  command -v node >/dev/null || die "Node.js $NODE_MIN or newer is needed: https://nodejs.org/"
  local nodev; nodev=$(node --version | sed 's/^v//')
  version_ge "$nodev" "$NODE_MIN" || die "Node.js $NODE_MIN or newer is needed (found $nodev)"
}

# ensure_apt_packages installs the Debian/Ubuntu packages given that are not
# installed yet. Elsewhere it only says what to install.
ensure_apt_packages() {
  local missing=() p
  if ! command -v dpkg-query >/dev/null; then
    say "not a Debian-like system: make sure these are installed: $*"
    return 0
  fi
  for p in "$@"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing+=("$p")
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  say "installing system packages: ${missing[*]}"
  as_root apt-get update -q
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${missing[@]}"
}

# The desktop build needs GTK 3 and WebKitGTK 4.1 headers on Linux.
DESKTOP_PACKAGES=(build-essential pkg-config libgtk-3-dev libwebkit2gtk-4.1-dev)
# Tests also run the window under Xvfb and drive Chromium.
TEST_PACKAGES=(xvfb xauth imagemagick dbus xdotool chromium at-spi2-core python3-pyatspi)

ensure_wails() {
  # Not `wails version | grep -q`: under pipefail grep's early exit fails
  # the pipe, and Wails would be reinstalled every time.
  if command -v wails >/dev/null && [[ "$(wails version 2>/dev/null)" == *"$WAILS_VERSION"* ]]; then
    return 0
  fi
  say "installing the Wails CLI $WAILS_VERSION"
  go install "github.com/wailsapp/wails/v2/cmd/wails@$WAILS_VERSION"
}

# ensure_npm_packages installs the npm packages of a folder (default
# frontend/) unless its lock file is older than what is installed.
ensure_npm_packages() {
  local dir="$ROOT/${1:-frontend}"
  local stamp="$dir/node_modules/.package-lock.json"
  if [ -f "$stamp" ] && [ "$stamp" -nt "$dir/package-lock.json" ]; then
    return 0
  fi
  say "installing the npm packages of ${1:-frontend}/"
  (cd "$dir" && npm ci --no-audit --no-fund)
}

# stamp_ldflags prints the -ldflags that stamp version, commit and build time.
stamp_ldflags() {
  local ver commit when
  ver=$(git -C "$ROOT" describe --tags --always --dirty 2>/dev/null || echo dev)
  commit=$(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo unknown)
  when=$(date -u +%Y-%m-%dT%H:%M:%SZ)
  echo "-X github.com/comptoir-pos/comptoir/backend/cli.version=$ver -X github.com/comptoir-pos/comptoir/backend/cli.commit=$commit -X github.com/comptoir-pos/comptoir/backend/cli.buildTime=$when"
}

# build_desktop builds build/bin/comptoir with the version stamped in.
build_desktop() {
  local flags
  flags=$(stamp_ldflags)
  say "building the desktop app ($flags)"
  local tags=""
  [ "$(uname -s)" = Linux ] && tags="-tags webkit2_41"
  # "$@": more flags, -s when frontend/dist is built already.
  (cd "$ROOT" && wails build -m $tags -ldflags "$flags" "$@" >&2)
}
