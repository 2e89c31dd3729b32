#!/usr/bin/env bash
# A Temporal dev server on loopback, for `orch run --engine temporal` on one
# machine, the temporal_e2e tests and bench/temporal.sh.
#
#   scripts/temporal-dev.sh build    build the Temporal CLI once (about 5 minutes,
#                                    213 MB) and print its path; reused afterwards
#   scripts/temporal-dev.sh start [--port P] [--db FILE] [--dir DIR] [--no-search-attributes]
#                                    start the dev server in the background, wait
#                                    until it answers, print its address (host:port)
#   scripts/temporal-dev.sh stop [--dir DIR]
#                                    stop the server that start left running
#   scripts/temporal-dev.sh status [--dir DIR]
#                                    print the address if it is running (exit 1 if not)
#
# The CLI comes from tools/temporal (its own module, pinned to
# github.com/temporalio/cli v1.5.1) and is cached in
# ${ORCH_TOOLS_CACHE:-$HOME/.cache/orch-tools}/temporal-v1.5.1.
# --dir (default ${ORCH_TEMPORAL_DIR:-$PWD/.orch/temporal-dev}) holds the pid
# file, the server's log and, unless --db says otherwise, its database
# (temporal.db): starting again on the same file keeps every workflow's history.
# --port defaults to 7233; the web UI is not started. The server has orch's
# search attributes (OrchCuelist, OrchRun, OrchState: Keyword), so that
# temporal workflow list --query finds runs; --no-search-attributes leaves
# them out (a run then starts without them, with a note).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
version=v1.5.1
cache=${ORCH_TOOLS_CACHE:-$HOME/.cache/orch-tools}
bin=$cache/temporal-$version

usage() { sed -n '2,24p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }
die() { echo "temporal-dev.sh: $*" >&2; exit 1; }

build() {
	[ -x "$bin" ] && return 0
	command -v go >/dev/null || die "go is needed to build the Temporal CLI"
	mkdir -p "$cache"
	echo "building the Temporal CLI $version into $bin (once: about 5 minutes)" >&2
	local tmp="$bin.tmp.$$" work
	# The server's modules and their build (about 3 GB) are needed once:
	# they go to a module and build cache of the build's own, deleted with
	# it; modules already in the user's module cache are taken from there.
	work=$(mktemp -d "$cache/temporal-build.XXXXXX")
	# Into a temporary name first, so a build cut short leaves nothing to reuse.
	(cd "$root/tools/temporal" &&
		GOPROXY="file://$(go env GOMODCACHE)/cache/download,$(go env GOPROXY)" \
		GOMODCACHE="$work/mod" GOCACHE="$work/build" GOFLAGS=-modcacherw \
		go build -trimpath -o "$tmp" github.com/temporalio/cli/cmd/temporal) ||
		{ rm -rf "$tmp" "$work"; die "could not build the Temporal CLI (tools/temporal)"; }
	rm -rf "$work"
	mv -f "$tmp" "$bin"
}

cmd=${1:-}
[ -n "$cmd" ] || usage
shift
port=7233
dir=${ORCH_TEMPORAL_DIR:-$PWD/.orch/temporal-dev}
db=""
attrs=(--search-attribute OrchCuelist=Keyword --search-attribute OrchRun=Keyword --search-attribute OrchState=Keyword)
while [ $# -gt 0 ]; do
	case $1 in
	--port) port=${2:?--port needs a number}; shift 2 ;;
	--db) db=${2:?--db needs a file}; shift 2 ;;
	--dir) dir=${2:?--dir needs a directory}; shift 2 ;;
	--no-search-attributes) attrs=(); shift ;;
	*) echo "temporal-dev.sh: unknown argument $1" >&2; usage ;;
	esac
done
case $port in '' | *[!0-9]*) die "--port $port: not a port number" ;; esac
pidfile=$dir/server.pid
addrfile=$dir/server.addr
log=$dir/server.log

running() { # the pid of the server start left, if it is alive
	local pid
	[ -f "$pidfile" ] || return 1
	pid=$(cat "$pidfile")
	[ -n "$pid" ] && kill -0 "$pid" 2>/dev/null || return 1
	# Not some other process that was given the same pid since.
	case $(ps -p "$pid" -o args= 2>/dev/null) in *start-dev*) echo "$pid" ;; *) return 1 ;; esac
}

answers() { "$bin" operator namespace describe --namespace default --address "$1" >/dev/null 2>&1; }

case $cmd in
build)
	build
	echo "$bin"
	;;
start)
	build
	mkdir -p "$dir"
	if pid=$(running); then
		addr=$(cat "$addrfile")
		echo "temporal-dev.sh: already running (pid $pid) at $addr" >&2
		echo "$addr"
		exit 0
	fi
	db=${db:-$dir/temporal.db}
	addr=127.0.0.1:$port
	# Its own session, stdin and stdout away from the caller: the caller may
	# read this script's output to its end, and must not wait for the server.
	# Two of the server's defaults cost most of a chained cue's time (issue 32):
	# the history service loads its transfer tasks (every activity and workflow
	# task dispatched) at most 20 times a second per shard, and the dev server
	# has one shard, so each dispatch waited about 40 ms; and an activity on the
	# workflow's own task queue goes through matching instead of back with the
	# workflow task that scheduled it (eager activity execution, off by
	# default). Both are dynamic config a cluster's operator sets the same way.
	setsid "$bin" server start-dev --ip 127.0.0.1 --port "$port" --headless \
		--dynamic-config-value history.transferProcessorMaxPollRPS=1000 \
		--dynamic-config-value history.timerProcessorMaxPollRPS=1000 \
		--dynamic-config-value system.enableActivityEagerExecution=true \
		--db-filename "$db" --log-level warn "${attrs[@]}" </dev/null >>"$log" 2>&1 &
	pid=$!
	echo "$pid" >"$pidfile"
	echo "$addr" >"$addrfile"
	for _ in $(seq 1 600); do # up to 60 s: it is usually ready in under one
		if answers "$addr"; then
			echo "$addr"
			exit 0
		fi
		kill -0 "$pid" 2>/dev/null || {
			rm -f "$pidfile"
			tail -n 20 "$log" >&2
			die "the dev server exited (log: $log)"
		}
		sleep 0.1
	done
	die "the dev server (pid $pid) does not answer at $addr after 60 s (log: $log)"
	;;
stop)
	pid=$(running) || { rm -f "$pidfile"; echo "temporal-dev.sh: not running" >&2; exit 0; }
	kill -TERM "$pid"
	for _ in $(seq 1 100); do
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.1
	done
	if kill -0 "$pid" 2>/dev/null; then
		kill -KILL "$pid"
		# Gone before we return: a server started next may open the same database.
		while kill -0 "$pid" 2>/dev/null; do sleep 0.1; done
	fi
	rm -f "$pidfile"
	echo "temporal-dev.sh: stopped (pid $pid)" >&2
	;;
status)
	pid=$(running) || { echo "temporal-dev.sh: not running" >&2; exit 1; }
	cat "$addrfile"
	;;
*) usage ;;
esac
