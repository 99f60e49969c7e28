#!/usr/bin/env bash
# Builds the empty Wails v2 app the desktop numbers are compared with, in
# DIR (default /tmp/comptoir-bench-empty-wails), outside the repository:
# `wails init -n empty -t vanilla`, plus one line in its OnDomReady that logs
# "empty: dom ready" (the same moment Comptoir logs "window shown"), built
# like Comptoir: `wails build -m -tags webkit2_41`. Offline: the template's
# frontend is plain HTML/JS/CSS, so it is copied into frontend/dist as is
# (-s: no npm install, no Vite) and the Go modules come from the cache.
# Prints the binary's path. Reuses a build made by the same Wails CLI.
set -euo pipefail
dir=${1:-/tmp/comptoir-bench-empty-wails}
wails=$(command -v wails || echo "$(go env GOPATH)/bin/wails")
ver=$("$wails" version 2>/dev/null | tail -n1)
bin=$dir/empty/build/bin/empty
if [[ -x $bin && -f $dir/version && $(cat "$dir/version") == "$ver" ]]; then
	echo "$bin"
	exit 0
fi
rm -rf "$dir"
mkdir -p "$dir"
cd "$dir"
"$wails" init -n empty -t vanilla >&2
cd empty
# The template's index.html loads src/main.js as a module and imports its
# CSS through Vite; serve the same files without a bundler.
mkdir -p frontend/dist
cp -r frontend/src frontend/dist/src
[[ -d frontend/public ]] && cp -r frontend/public/. frontend/dist/ || true
sed -e 's#\./src/main.js#./src/main.js#' frontend/index.html >frontend/dist/index.html
# CSS imports are a Vite feature: link the stylesheets instead.
sed -i -e "/^import '.*\.css';/d" frontend/dist/src/main.js
# Image imports too: the logo is a plain URL.
sed -i -e "s|^import logo from '\./assets/images/logo-universal.png';|const logo = './src/assets/images/logo-universal.png';|" frontend/dist/src/main.js
sed -i -e 's#</head>#<link rel="stylesheet" href="./src/style.css"><link rel="stylesheet" href="./src/app.css"></head>#' frontend/dist/index.html
# The template's bindings import: wailsjs/ lives beside src/ in dist.
[[ -d frontend/wailsjs ]] && cp -r frontend/wailsjs frontend/dist/wailsjs
sed -i -e "s#\.\./wailsjs/#../wailsjs/#" frontend/dist/src/main.js
# OnDomReady: one log line, the empty app's "window shown".
python3 - <<'PY'
import re
s = open("main.go").read()
s = s.replace("OnStartup:        app.startup,", 'OnStartup:        app.startup,\n\t\tOnDomReady:       func(ctx context.Context) { println("empty: dom ready") },')
if '"context"' not in s:
    s = s.replace('import (', 'import (\n\t"context"', 1)
open("main.go", "w").write(s)
PY
grep -q 'empty: dom ready' main.go || { echo "empty-wails: could not add OnDomReady" >&2; exit 1; }
# Its modules are a subset of Comptoir's own (Wails v2.16.0 and its
# dependencies), in the module cache once Comptoir is built: no network.
GOFLAGS=-mod=mod GOPROXY=off GOSUMDB=off "$wails" build -m -s -skipbindings -tags webkit2_41 >&2
echo "$ver" >"$dir/version"
echo "$bin"
