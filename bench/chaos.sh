#!/usr/bin/env bash
# Leftover processes and write failures (issue 15, items 18 and 1). Each case
# runs one cue whose agent, runner/testdata/descendants.sh, leaves 23
# descendants every way a process can try to outlive it (setsid, setsid env -i,
# parents that exit so their children are reparented, shells ignoring
# SIGTERM), then ends it one way:
#   normal-end      the agent exits 0 once its descendants run
#   go-timeout      the agent hangs past its GO timeout (3s)
#   SIGINT SIGTERM  sent to orch run
#   orch-stop       orch stop last, from another process
#   kill9-stop      orch run is killed with kill -9, then orch stop last
#   kill9-resume    orch run is killed with kill -9, then orch resume last
#   disk-full       the database is on a tiny tmpfs and the agent is chatty
#                   (needs root: skipped otherwise)
#   immutable-db    chattr +i on the database files while the agent is
#                   chatty (skipped where chattr does not work)
#   lock-held       another process (python3's sqlite3) takes the database's
#                   write lock and keeps it; orch's lock timeout is 3s
#                   (ORCH_LOCK_TIMEOUT): the time is from the lock taken
#   lock-SIGTERM    the same with a lock timeout of 5m, and SIGTERM sent to
#                   orch 1s after the lock was taken: it must end within
#                   kill_grace + 2s all the same
#   db-deleted      the database's directory is deleted (rm -rf) under the
#                   live run
# each with a cgroup per run (where the machine allows one) and without
# (ORCH_NO_CGROUP=1: the subreaper's tree sweeps). Per case it prints the
# survivors (of the agent and its 23 descendants, and the chatty agent's
# shell: 24 or 25 processes, counted the moment orch has exited), whether orch hung (still running kill_grace + 10s after the
# trigger: then it is killed with kill -9 and the case says hung), the time
# from the trigger to orch's exit (for kill9-*: to the end of orch stop /
# orch resume; for normal-end and go-timeout: from the moment the agent's
# descendants all run) and orch's exit status. It never hangs itself and
# leaves nothing behind.
#   bench/chaos.sh [MODE...]   (MODE: cgroup, tree-sweep; default both;
#                               CHAOS_CASES="lock-held db-deleted" runs those)
set -uo pipefail
cd "$(dirname "$0")/.."
modes=${*:-cgroup tree-sweep}
tmp=$(mktemp -d)
script=$PWD/runner/testdata/descendants.sh
grace=1 # kill_grace, seconds
orch=$tmp/orch
go build -o "$orch" ./cmd/orch || exit 1
mkdir "$tmp/tmp"
export TMPDIR=$tmp/tmp

# alive DIR: the pids the case's agent wrote that are live processes of
# descendants.sh (or of the agent's shell)
alive() {
	local pid state cmd
	for pid in $(cat "$1/pids" "$1/pids.agent" 2>/dev/null | sort -u); do
		state=$(sed 's/.*) //' "/proc/$pid/stat" 2>/dev/null | cut -d' ' -f1) || continue
		case $state in "" | Z | X) continue ;; esac
		cmd=$(tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null)
		case $cmd in *descendants.sh* | "sleep 7777 ") echo "$pid" ;; esac
	done
}

mounts=() immutable=() holders=()
cleanup() {
	for h in "${holders[@]}"; do kill "$h" 2>/dev/null; done
	for d in "$tmp"/*/; do
		alive "$d" | xargs -r kill -9 2>/dev/null
	done
	for f in "${immutable[@]}"; do chattr -i "$f" 2>/dev/null; done
	for m in "${mounts[@]}"; do umount "$m" 2>/dev/null; done
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

now() { date +%s.%N; }
since() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.2fs", b - a }'; }

# waitexit PID SECONDS: waits for orch PID (a child of this shell) to end;
# returns 1 if it is still running after SECONDS.
waitexit() {
	local pid=$1 deadline
	deadline=$(awk -v a="$(now)" -v s="$2" 'BEGIN { printf "%.3f", a + s }')
	while kill -0 "$pid" 2>/dev/null; do
		if awk -v a="$(now)" -v d="$deadline" 'BEGIN { exit !(a > d) }'; then return 1; fi
		sleep 0.05
	done
}

# agent_cmd KIND DIR: the agent's command line (YAML flow sequence). It
# starts the tree only once: orch resume runs the cue again, and then it just
# exits 0. The write-failure cases keep writing to stderr afterwards.
agent_cmd() {
	local kind=$1 d=$2 tree
	case $kind in
	normal-end) tree="sh $script $d/pids exit" ;;
	disk-full | immutable-db) tree="sh $script $d/pids exit; while :; do echo chatter-chatter-chatter-chatter-chatter-chatter-chatter-chatter-chatter >&2; done" ;;
	*) tree="exec sh $script $d/pids hang" ;;
	esac
	echo "[sh, -c, '[ -e $d/started ] && exit 0; touch $d/started; echo \$\$ >>$d/pids.agent; $tree']"
}

printf '%-13s %-10s %9s %5s %9s %5s  %s\n' case mode survivors hung exit-time code note
run_case() {
	local kind=$1 mode=$2 d=$tmp/$2-$1 timeout=120s note="" code=- hung=no t0 pid helper
	mkdir -p "$d/db"
	[ "$kind" = go-timeout ] && timeout=3s
	if [ "$kind" = disk-full ]; then
		if [ "$(id -u)" != 0 ] || ! mount -t tmpfs -o size=4m tmpfs "$d/db" 2>/dev/null; then
			printf '%-13s %-10s skipped: mounting a tmpfs needs root\n' "$kind" "$mode"
			return
		fi
		mounts+=("$d/db")
	fi
	if [ "$kind" = immutable-db ] && ! { touch "$d/probe" && chattr +i "$d/probe" 2>/dev/null && chattr -i "$d/probe"; }; then
		printf '%-13s %-10s skipped: chattr +i does not work here\n' "$kind" "$mode"
		return
	fi
	cat >"$d/cuelist.yaml" <<-EOF
		cuelist:
		  id: chaos
		  defaults: {ack_timeout: 10s, timeout: $timeout, kill_grace: ${grace}s}
		  cues:
		    - {id: TREE, agents: [tree]}
		---
		agent:
		  id: tree
		  command: $(agent_cmd "$kind" "$d")
	EOF
	local -a env=(ORCH_DB="$d/db/orch.db")
	[ "$mode" = tree-sweep ] && env+=(ORCH_NO_CGROUP=1)
	case $kind in
	lock-held) env+=(ORCH_LOCK_TIMEOUT=3s) ;;
	lock-SIGTERM) env+=(ORCH_LOCK_TIMEOUT=5m) ;;
	esac
	env "${env[@]}" "$orch" run "$d/cuelist.yaml" >"$d/out" 2>&1 &
	pid=$!
	for _ in $(seq 1200); do
		[ -e "$d/pids.ready" ] || ! kill -0 "$pid" 2>/dev/null && break
		sleep 0.05
	done
	if [ ! -e "$d/pids.ready" ]; then
		kill -9 "$pid" 2>/dev/null
		printf '%-13s %-10s the agent did not start its descendants: %s\n' "$kind" "$mode" "$(tail -1 "$d/out")"
		return
	fi
	t0=$(now)
	local limit=$((grace + 10))
	case $kind in
	go-timeout) limit=$((limit + 3)) ;;
	SIGINT) kill -INT "$pid" ;;
	SIGTERM) kill -TERM "$pid" ;;
	orch-stop) env "${env[@]}" timeout 60 "$orch" stop last >"$d/stop.out" 2>&1 & ;;
	kill9-*) kill -9 "$pid"; wait "$pid" 2>/dev/null ;;
	disk-full)
		for _ in $(seq 1200); do # until the tmpfs is full (or orch ended)
			[ "$(df --output=avail "$d/db" | tail -1)" -lt 64 ] || ! kill -0 "$pid" 2>/dev/null && break
			sleep 0.05
		done
		t0=$(now) ;;
	immutable-db)
		sleep 0.3
		for f in "$d"/db/orch.db*; do chattr +i "$f" && immutable+=("$f"); done
		t0=$(now) ;;
	lock-held | lock-SIGTERM)
		python3 -c 'import os, sqlite3, sys, time
c = sqlite3.connect(sys.argv[1], isolation_level=None, timeout=10)
c.execute("BEGIN IMMEDIATE")
print("held", flush=True)
while time.sleep(0.05) or os.getppid() != 1: pass' "$d/db/orch.db" >"$d/lock.out" 2>&1 &
		holders+=($!)
		for _ in $(seq 200); do grep -q held "$d/lock.out" 2>/dev/null && break; sleep 0.05; done
		t0=$(now)
		if [ "$kind" = lock-SIGTERM ]; then
			sleep 1
			kill -TERM "$pid"
			t0=$(now)
		fi ;;
	db-deleted)
		rm -rf "$d/db"
		t0=$(now) ;;
	esac
	if ! waitexit "$pid" "$limit"; then
		hung=yes
		note="$(alive "$d" | wc -l) alive when orch was killed with kill -9; "
		kill -9 "$pid" 2>/dev/null
	fi
	wait "$pid" 2>/dev/null
	code=$?
	case $kind in
	kill9-stop | kill9-resume)
		t0=$(now)
		env "${env[@]}" timeout 60 "$orch" "${kind#kill9-}" last >"$d/after.out" 2>&1
		code=$?
		note="orch ${kind#kill9-} exited $code; " ;;
	esac
	local exit_time
	exit_time=$(since "$t0")
	local survivors
	survivors=$(alive "$d" | wc -l)
	[ "$hung" = yes ] && exit_time=-
	case $kind in disk-full | immutable-db | lock-* | db-deleted) note+="$(grep '^orch: ' "$d/out" | tail -1 | cut -c1-110)" ;; esac
	for h in "${holders[@]}"; do kill "$h" 2>/dev/null; done
	printf '%-13s %-10s %9s %5s %9s %5s  %s\n' "$kind" "$mode" "$survivors" "$hung" "$exit_time" "$code" "$note"
	alive "$d" | xargs -r kill -9 2>/dev/null
	for f in "$d"/db/orch.db*; do chattr -i "$f" 2>/dev/null; done
	# An orch killed with kill -9 leaves its run's cgroup (emptied above).
	local id
	id=$(env "${env[@]}" "$orch" status last --output json 2>/dev/null | python3 -c 'import json, sys; print(json.load(sys.stdin)["id"])' 2>/dev/null)
	if [ -n "$id" ]; then
		find /sys/fs/cgroup -maxdepth 8 -type d \( -name "orch-run-$id" -o -name "orch-run-$id.*" \) 2>/dev/null | while read -r cg; do
			sleep 0.1
			rmdir "$cg"/p* "$cg" 2>/dev/null
		done
	fi
}

for mode in $modes; do
	for kind in ${CHAOS_CASES:-normal-end go-timeout SIGINT SIGTERM orch-stop kill9-stop kill9-resume disk-full immutable-db lock-held lock-SIGTERM db-deleted}; do
		run_case "$kind" "$mode"
	done
done
