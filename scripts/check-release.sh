#!/usr/bin/env bash
# Release-build check: the desktop binary must be a Wails production build
# (no web inspector, no debug build) with its version stamped in.
#
#   scripts/check-release.sh [--version V] [BINARY...]
#                                            default: build/bin/comptoir
#
# Reads the build information Go keeps in every binary (`go version -m`), so
# it also checks cross-built ones (comptoir.exe). Checks:
#   - tags: `desktop` and `production`; none of `devtools` (`wails build
#     -devtools`), `debug` (`wails build -debug`) or `dev` (`wails dev`);
#   - -ldflags: -s -w (Wails adds them in production mode only), and the
#     version, commit and build time stamped (scripts/lib.sh stamp_ldflags),
#     the version not "dev"; -H windowsgui for Windows (no console window).
#     Go does not record -ldflags of a -trimpath build: then only the symbol
#     table's absence is checked, with `go tool nm`;
#   - no -gcflags with -N or -l (optimisations off: debug and dev modes),
#     no race detector;
#   - the embedded UI is a production build, with no test fixture in it
#     (`npm run dev` develops on a running `comptoir serve --demo`: no fake
#     backend exists to ship).
# A binary this machine can run is also asked its version, which must not be
# the unstamped "dev"; with --version V (scripts/dist gives the version it
# stamped), it must say V. (A cross-built one is stamped by the same -ldflags
# as the one that runs here.) Exits 1 with one line per problem.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
want_version=""
if [[ ${1:-} == --version ]]; then
	[[ -n ${2:-} && ${2:-} != dev ]] || { echo "check-release: --version needs a release version, not '${2:-}'" >&2; exit 2; }
	want_version=$2
	shift 2
fi
[[ $# -gt 0 ]] || set -- "$root/build/bin/comptoir"

# Strings only the component tests' fixtures hold (frontend/src/test/: the
# test menu, the fake staff session): they survive minification.
fixture_markers=("Ensalada nizarda" "staff:sid-1")
for marker in "${fixture_markers[@]}"; do
	grep -rqF -- "$marker" "$root/frontend/src/test/" ||
		{ echo "check-release: the marker '$marker' is no longer in the test fixtures: choose another" >&2; exit 2; }
done
# A development build of the UI (Svelte's dev mode: `vite build --mode
# development`, `wails dev`) names each component by its source file.
dev_marker="src/App.svelte"
[[ -f $root/frontend/$dev_marker ]] ||
	{ echo "check-release: frontend/$dev_marker is gone: choose another development-build marker" >&2; exit 2; }

failures=0
fail() {
	printf 'check-release: FAIL: %s: %s\n' "$bin" "$*" >&2
	failures=$((failures + 1))
}
note() { printf 'check-release: note: %s: %s\n' "$bin" "$*" >&2; }

for bin in "$@"; do
	before=$failures
	if [[ ! -f $bin ]]; then
		fail "no such file (build it with scripts/test, or wails build)"
		continue
	fi
	if ! info=$(go version -m "$bin" 2>&1); then
		fail "no Go build information (go version -m): not a Go binary, or a damaged one${info:+: $info}"
		continue
	fi
	# setting prints a `build KEY=VALUE` line's value, quotes removed.
	setting() {
		local v
		v=$(sed -n "s/^[[:space:]]*build[[:space:]]*$1=//p" <<<"$info" | head -n1)
		v=${v#\"}
		printf '%s' "${v%\"}"
	}
	tags=$(setting -tags)
	ldflags=$(setting -ldflags)
	gcflags=$(setting -gcflags)
	trimpath=$(setting -trimpath)
	goos=$(setting GOOS)
	goarch=$(setting GOARCH)

	has_tag() { [[ ,$tags, == *,"$1",* ]]; }
	for tag in desktop production; do
		has_tag "$tag" || fail "built without the '$tag' tag (tags: '${tags:-none}'): not a 'wails build' production build"
	done
	if has_tag devtools; then fail "built with the 'devtools' tag (wails build -devtools): the web inspector can be opened"; fi
	if has_tag debug; then fail "built with the 'debug' tag (wails build -debug): a debug build, inspector included"; fi
	if has_tag dev; then fail "built with the 'dev' tag: a 'wails dev' build"; fi

	if [[ -z $ldflags && $trimpath == true ]]; then
		note "built with -trimpath, so Go did not record its -ldflags: stamps and -w unchecked"
	else
		read -ra ld <<<"$ldflags"
		has_ld() {
			local w
			for w in "${ld[@]}"; do [[ $w == "$1" ]] && return 0; done
			return 1
		}
		has_ld -s || fail "-ldflags lack -s: the symbol table was kept (not a production build): '$ldflags'"
		has_ld -w || fail "-ldflags lack -w: DWARF debug information was kept (not a production build): '$ldflags'"
		for var in version commit buildTime; do
			value=$(grep -o "backend/cli\.$var=[^ ]*" <<<"$ldflags" | head -n1 | cut -d= -f2- || true)
			[[ -n $value ]] || fail "cli.$var is not stamped by -ldflags -X (scripts/lib.sh stamp_ldflags): '$ldflags'"
			if [[ $var == version && $value == dev ]]; then fail "cli.version is stamped 'dev'"; fi
		done
		if [[ $goos == windows && $ldflags != *"-H windowsgui"* ]]; then
			fail "a Windows build without -H windowsgui: a console window opens beside the kiosk"
		fi
	fi
	# Whatever was recorded: a release has no symbol table.
	if nm=$(go tool nm "$bin" 2>&1); then
		fail "the binary has a symbol table (go tool nm lists symbols): not stripped with -s"
	elif [[ $nm != *"no symbol"* ]]; then
		fail "go tool nm could not read it: ${nm%%$'\n'*}"
	fi
	if [[ $gcflags == *-N* || $gcflags =~ (^|[[:space:]=])-l($|[[:space:]]) ]]; then
		fail "built with -gcflags '$gcflags': optimisations off (wails build -debug, or wails dev)"
	fi
	if [[ $(setting -race) == true ]]; then fail "built with the race detector"; fi
	# The embedded UI: a production build of the app, not of its tests.
	for marker in "${fixture_markers[@]}"; do
		if grep -aqF -- "$marker" "$bin"; then
			fail "the embedded UI carries a test fixture (found '$marker', from frontend/src/test/): app code imports test code"
		fi
	done
	if grep -aqF -- "$dev_marker" "$bin"; then
		fail "the embedded UI is a development build (found '$dev_marker', which Svelte's dev mode names its components by): build it with \`npm run build\`"
	fi

	if [[ $goos == "$(go env GOOS)" && $goarch == "$(go env GOARCH)" ]]; then
		if ! got=$(timeout 10 "$bin" version 2>&1); then
			fail "'$bin version' failed: $got"
		elif [[ $got == "comptoir dev"* ]]; then
			fail "'$bin version' says '$got': the version was not stamped"
		elif [[ -n $want_version && $got != "comptoir $want_version" && $got != "comptoir $want_version ("* ]]; then
			fail "'$bin version' says '$got', not version '$want_version'"
		fi
	fi

	if ((failures == before)); then
		echo "check-release: ok: $bin (tags $tags; $goos/$goarch)"
	fi
done

if ((failures > 0)); then
	echo "check-release: $failures problem(s): not a release build" >&2
	exit 1
fi
