#!/usr/bin/env bash
# Desktop smoke test: run the real Wails window under Xvfb and keep a
# screenshot of its first screen.
#
#   scripts/desktop-smoke.sh [BINARY] [SCREENSHOT.png]
#
# Arguments are told apart by the .png suffix, so their order does not matter.
# Without BINARY the app is built first with `wails build`. SCREENSHOT defaults
# to build/bin/desktop-smoke.png. Exits non-zero if the window never rendered
# within SMOKE_TIMEOUT seconds (default 60).
#
# Needs: xvfb xauth imagemagick xdotool (and dbus for an isolated session bus,
# at-spi2-core and python3-pyatspi to order through the accessibility tree). If
# WebKit's bubblewrap sandbox cannot start (some containers forbid user
# namespaces), run with WEBKIT_DISABLE_SANDBOX_THIS_IS_DANGEROUS=1.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)

# The part that runs inside the virtual display (the script calls itself
# through xvfb-run, which owns the X server's lifetime).
if [[ ${SMOKE_INSIDE_XVFB:-} == 1 ]]; then
	bin=$1 shot=$2 work=$3 timeout=$4
	app=
	# The app runs in its own process group so its helpers go with it.
	trap '[[ -n $app ]] && kill -- "-$app" 2>/dev/null && wait "$app" 2>/dev/null; true' EXIT

	# A second launch must not open a second window on the same terminal:
	# Wails' single-instance lock (over the session bus) hands it to the
	# first, which comes forward and says so; the second exits.
	second_launch() {
		if [[ -z ${DBUS_SESSION_BUS_ADDRESS:-} ]]; then
			echo "desktop-smoke: no session bus: the second-launch check is skipped"
			return
		fi
		# It exits with status 1 once handed over: only a timeout is a failure.
		local rc=0
		timeout 30 "$bin" --demo >"$work/second.log" 2>&1 || rc=$?
		if ((rc == 124)); then
			echo "desktop-smoke: the second launch did not exit by itself" >&2
			cat "$work/second.log" >&2
			exit 1
		fi
		for ((j = 0; j < 10; j++)); do
			if grep -q 'a second launch was stopped' "$work/app.log"; then
				kill -0 "$app" || { echo "desktop-smoke: the first window died at the second launch" >&2; exit 1; }
				echo "desktop-smoke: a second launch was handed to the first window"
				return
			fi
			sleep 1
		done
		echo "desktop-smoke: the first window never heard of the second launch" >&2
		cat "$work/app.log" "$work/second.log" >&2
		exit 1
	}

	# Staff mode through the desktop binding: Ctrl+Alt+S, the demo PIN,
	# Enter; then, the app stopped, the journal's audit trail must hold the
	# unlock by a staff session.
	staff_unlock() {
		xdotool key ctrl+alt+s
		sleep 1
		xdotool type --delay 100 1234
		xdotool key Return
		sleep 3
		import -window root "$work/staff.png" 2>/dev/null && cp "$work/staff.png" "${shot%.png}-staff.png"
		kill "$app" && wait "$app" 2>/dev/null
		app=
		if ! "$bin" audit --demo --action unlock >"$work/audit.json" 2>&1 || ! grep -q '"who": "staff:' "$work/audit.json"; then
			echo "desktop-smoke: staff mode did not open through the desktop binding (no unlock in the audit trail)" >&2
			cat "$work/audit.json" "$work/app.log" >&2
			exit 1
		fi
		echo "desktop-smoke: staff mode opened through the desktop binding: ${shot%.png}-staff.png"
	}

	# The accessibility bus: the order is placed through the window's
	# accessibility tree, by the controls' roles and names.
	if [[ -x /usr/libexec/at-spi-bus-launcher ]]; then
		/usr/libexec/at-spi-bus-launcher --launch-immediately >"$work/atspi.log" 2>&1 &
	fi
	export NO_AT_BRIDGE=0

	# A customer orders a croissant: the demo's menu is there, and the
	# cart takes it.
	order_a_product() {
		if ! /usr/bin/python3 -c 'import pyatspi' 2>/dev/null; then
			echo "desktop-smoke: no python3-pyatspi: ordering a product is skipped" >&2
			return
		fi
		if ! /usr/bin/python3 "$root/scripts/desktop-order.py"; then
			import -window root "$work/order.png" 2>/dev/null && cp "$work/order.png" "${shot%.png}-order.png"
			echo "desktop-smoke: a product could not be ordered in the demo (screenshot ${shot%.png}-order.png)" >&2
			cat "$work/app.log" >&2
			exit 1
		fi
		import -window root "$work/order.png" 2>/dev/null && cp "$work/order.png" "${shot%.png}-order.png"
	}

	# The demo keeps its own data folder: the real one stays untouched.
	check_data_folders() {
		if [[ -e $XDG_CONFIG_HOME/comptoir ]]; then
			echo "desktop-smoke: the demo wrote into the real data folder $XDG_CONFIG_HOME/comptoir" >&2
			ls -la "$XDG_CONFIG_HOME/comptoir" >&2
			exit 1
		fi
		if [[ ! -f $XDG_CONFIG_HOME/comptoir-demo/comptoir.db ]]; then
			echo "desktop-smoke: the demo's journal is not in $XDG_CONFIG_HOME/comptoir-demo" >&2
			exit 1
		fi
		echo "desktop-smoke: the demo kept its data in its own folder"
	}

	# --demo: the built-in simulated terminal, as a new user first sees it,
	# with a fresh home and no data folder given.
	setsid "$bin" --demo >"$work/app.log" 2>&1 &
	app=$!

	# Before the window maps the root window is one flat colour; a blank white
	# webview adds one or two more. Text and the card need many shades.
	min_colours=64
	for ((i = 0; i < timeout; i++)); do
		sleep 1
		if ! kill -0 "$app" 2>/dev/null; then
			echo "desktop-smoke: the app exited early" >&2
			cat "$work/app.log" >&2
			exit 1
		fi
		import -window root "$work/shot.png" 2>/dev/null || continue
		colours=$(convert "$work/shot.png" -format %k info:)
		if grep -q 'comptoir: window shown' "$work/app.log" && ((colours >= min_colours)); then
			cp "$work/shot.png" "$shot"
			echo "desktop-smoke: rendered within $((i + 1))s ($colours colours): $shot"
			grep 'window shown' "$work/app.log" || true
			second_launch
			order_a_product
			check_data_folders
			staff_unlock
			exit 0
		fi
	done
	echo "desktop-smoke: no rendered window after ${timeout}s" >&2
	[[ -f $work/shot.png ]] && cp "$work/shot.png" "$shot" && echo "last screenshot: $shot" >&2
	cat "$work/app.log" >&2
	exit 1
fi

shot=$root/build/bin/desktop-smoke.png
bin=
for arg in "$@"; do
	case $arg in
	*.png) shot=$arg ;;
	*) bin=$arg ;;
	esac
done
timeout=${SMOKE_TIMEOUT:-60}

for tool in xvfb-run import convert xdotool; do
	command -v "$tool" >/dev/null || { echo "desktop-smoke: $tool not found (apt-get install xvfb xauth imagemagick xdotool)" >&2; exit 2; }
done

if [[ -z $bin ]]; then
	wails=$(command -v wails || echo "$(go env GOPATH)/bin/wails")
	(cd "$root" && "$wails" build -m -skipbindings -tags webkit2_41 -o comptoir-smoke)
	bin=$root/build/bin/comptoir-smoke
fi
bin=$(realpath "$bin")
mkdir -p "$(dirname "$shot")"
shot=$(realpath "$shot")

work=$(mktemp -d)
xvfb=
cleanup() {
	[[ -n $xvfb ]] && kill "$xvfb" 2>/dev/null && wait "$xvfb" 2>/dev/null
	rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# A throwaway home: the app must not read or write the developer's data, and
# a private session bus keeps the single-instance lock from finding a real
# Comptoir already running on this machine.
mkdir -p "$work/home" "$work/config" "$work/data" "$work/cache" "$work/runtime"
chmod 700 "$work/runtime"
export HOME=$work/home XDG_CONFIG_HOME=$work/config XDG_DATA_HOME=$work/data \
	XDG_CACHE_HOME=$work/cache XDG_RUNTIME_DIR=$work/runtime
unset COMPTOIR_DATA_DIR
export SMOKE_INSIDE_XVFB=1
unset DBUS_SESSION_BUS_ADDRESS WAYLAND_DISPLAY

session=()
command -v dbus-run-session >/dev/null && session=(dbus-run-session --)

# The session's output is mostly dbus and accessibility chatter: show all of
# it only on failure.
xvfb-run -a -s "-screen 0 1280x800x24" "${session[@]}" "$0" "$bin" "$shot" "$work" "$timeout" \
	>"$work/session.log" 2>&1 &
xvfb=$!
if ! wait "$xvfb"; then
	xvfb=
	cat "$work/session.log" >&2
	exit 1
fi
xvfb=
grep -E '^desktop-(smoke|order):|window shown' "$work/session.log"
