#!/usr/bin/env bash
# Desktop start-up and memory, beside an empty Wails v2 app, in one Xvfb
# session (make bench). For RUNS rounds, alternately the empty app then
# Comptoir (--demo, as the desktop smoke test runs it; fresh data directory):
#   t0 = spawn; DOM ready = the app's log line for Wails' OnDomReady
#   ("comptoir: window shown", "empty: dom ready"), polled every 5 ms;
#   5 s later, PSS (smaps_rollup) and RSS summed over the app's process tree
#   (the app and its WebKit children).
#
#   scripts/bench/desktop.sh COMPTOIR_BIN EMPTY_BIN OUT.json [RUNS]
set -euo pipefail

if [[ ${BENCH_INSIDE_XVFB:-} == 1 ]]; then
	comptoir=$1 empty=$2 work=$3 runs=$4
	tsv=$work/desktop.tsv
	: >"$tsv"
	app=
	trap '[[ -n $app ]] && kill -- "-$app" 2>/dev/null; true' EXIT
	tree() { # the pid and its descendants
		ps -e -o pid=,ppid= | awk -v root="$1" '
			{ parent[$1] = $2; pids[NR] = $1 }
			END {
				keep[root] = 1; changed = 1
				while (changed) { changed = 0
					for (i in pids) { p = pids[i]; if (!(p in keep) && (parent[p] in keep)) { keep[p] = 1; changed = 1 } } }
				for (p in keep) print p
			}'
	}
	sum_field() { # file key pids...
		local file=$1 key=$2 total=0 v p
		shift 2
		for p in "$@"; do
			v=$(awk -v k="$key" '$1 == k { print $2; exit }' "/proc/$p/$file" 2>/dev/null || true)
			total=$((total + ${v:-0}))
		done
		echo "$total"
	}
	for ((i = 0; i < runs; i++)); do
		for name in empty comptoir; do
			log=$work/$name-$i.log
			data=$work/data-$i
			if [[ $name == comptoir ]]; then
				cmd=("$comptoir" --demo) pattern='comptoir: window shown'
			else
				cmd=("$empty") pattern='empty: dom ready'
			fi
			t0=$(date +%s%N)
			COMPTOIR_DATA_DIR=$data setsid "${cmd[@]}" >"$log" 2>&1 &
			app=$!
			ready=
			for ((w = 0; w < 6000; w++)); do # 30 s
				if grep -q "$pattern" "$log" 2>/dev/null; then
					ready=$(date +%s%N)
					break
				fi
				kill -0 "$app" 2>/dev/null || break
				sleep 0.005
			done
			if [[ -z $ready ]]; then
				echo "desktop: $name run $i: no DOM ready" >&2
				tail -5 "$log" >&2 || true
				printf '%s\t%d\tfail\t0\t0\t0\t\n' "$name" "$i" >>"$tsv"
			else
				sleep 5
				mapfile -t pids < <(tree "$app")
				pss=$(sum_field smaps_rollup Pss: "${pids[@]}")
				rss=$(sum_field status VmRSS: "${pids[@]}")
				parts=()
				for p in "${pids[@]}"; do
					parts+=("$(cat "/proc/$p/comm" 2>/dev/null || echo '?')=$(sum_field smaps_rollup Pss: "$p")")
				done
				printf '%s\t%d\t%d\t%d\t%d\t%d\t%s\n' "$name" "$i" $(((ready - t0) / 1000)) "$pss" "$rss" "${#pids[@]}" "$(IFS=,; echo "${parts[*]}")" >>"$tsv"
				echo "desktop: $name run $i: DOM ready $(((ready - t0) / 1000000)) ms, PSS $((pss / 1024)) MB over ${#pids[@]} processes" >&2
			fi
			kill -- "-$app" 2>/dev/null || true
			wait "$app" 2>/dev/null || true
			app=
			sleep 1
		done
	done
	exit 0
fi

comptoir=$(realpath "$1") empty=$(realpath "$2") out=$3 runs=${4:-5}
for tool in xvfb-run; do
	command -v "$tool" >/dev/null || { echo "desktop: $tool not found (apt-get install xvfb xauth)" >&2; exit 2; }
done
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/home" "$work/config" "$work/data" "$work/cache" "$work/runtime"
chmod 700 "$work/runtime"
export HOME=$work/home XDG_CONFIG_HOME=$work/config XDG_DATA_HOME=$work/data \
	XDG_CACHE_HOME=$work/cache XDG_RUNTIME_DIR=$work/runtime
export BENCH_INSIDE_XVFB=1
unset DBUS_SESSION_BUS_ADDRESS WAYLAND_DISPLAY
session=()
command -v dbus-run-session >/dev/null && session=(dbus-run-session --)
xvfb-run -a -s "-screen 0 1280x800x24" "${session[@]}" "$0" "$comptoir" "$empty" "$work" "$runs" 2>&1 |
	grep -E '^desktop:' >&2 || true
python3 - "$work/desktop.tsv" "$out" "$runs" <<'PY'
import json, sys
tsv, out, runs = sys.argv[1], sys.argv[2], int(sys.argv[3])
apps = {}
for line in open(tsv):
    f = line.rstrip("\n").split("\t")
    name, i, us, pss, rss, procs = f[:6]
    a = apps.setdefault(name, {"domReadyMs": [], "pssKB": [], "rssKB": [], "procs": [], "failures": 0, "breakdown": {}})
    if us == "fail":
        a["failures"] += 1
        continue
    a["domReadyMs"].append(int(us) / 1000)
    a["pssKB"].append(int(pss)); a["rssKB"].append(int(rss)); a["procs"].append(int(procs))
    if len(f) > 6 and f[6]:
        a["breakdown"] = {k: int(v) for k, v in (x.rsplit("=", 1) for x in f[6].split(","))}  # the last run's
json.dump({"runs": runs, "apps": apps}, open(out, "w"), indent=1)
PY
