#!/usr/bin/env bash
# Crash-and-resume stress test (issue 5): REPS times, a 50-cue run (chains
# and independent cues, max_parallel 4, shell agents that count their runs,
# sleep 20-100ms and pass a trail along their chain) is killed with kill -9 at
# a random moment 50-800ms after it starts; one time in three the first
# `orch resume` is killed too; then `orch resume last` until it exits 0.
# After each repetition it checks that:
#   - every cue is completed, with the right trail of outputs;
#   - no cue recorded completed before a kill ran again;
#   - no cue ran more often than it has attempts recorded, none is left running;
#   - the event sequence numbers are exactly 1..N;
#   - PRAGMA integrity_check is ok;
#   - no process of the run (agents and their children) is left.
# Prints where the kills landed (the run's phase, and the last event recorded
# before the kill) and a summary. Exit status 1 if any repetition failed.
#   bench/killtest.sh [REPS] [SEED]
set -euo pipefail
cd "$(dirname "$0")/.."
reps=${1:-50}
seed=${2:-$(date +%s)}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
go build -o "$tmp/orch" ./cmd/orch
# orch keeps each run's work files in $TMPDIR, which a killed orch cannot remove.
mkdir "$tmp/tmp"
export TMPDIR=$tmp/tmp
orch=$tmp/orch
echo "killtest: $reps repetitions, seed $seed (bench/killtest.sh $reps $seed repeats them)"

cat >"$tmp/helper.py" <<'PY'
import json, os, random, sqlite3, sys

def load(path, default):
    try:
        with open(path) as f:
            return json.load(f)
    except FileNotFoundError:
        return default

def save(path, v):
    with open(path, "w") as f:
        json.dump(v, f)

def runs_of(d, cue):
    try:
        with open(os.path.join(d, "count", cue)) as f:
            return f.read().count("\n")
    except FileNotFoundError:
        return 0

def events(path):
    with open(path) as f:
        return [json.loads(l) for l in f if l.strip()]

cmd, d = sys.argv[1], sys.argv[2]

if cmd == "gen":  # gen DIR SEED CUES: the cuelist, and each cue's expected trail
    rng, n = random.Random(int(sys.argv[3])), int(sys.argv[4])
    lines = ["cuelist:", "  id: killtest", "  max_parallel: 4",
             "  defaults: {ack_timeout: 10s, timeout: 60s, kill_grace: 500ms}", "  cues:"]
    trails, i = {}, 1
    while i <= n:
        prev = ""
        for _ in range(rng.randint(1, 8)):  # a chain; 1: an independent cue
            if i > n:
                break
            cue = "K%02d" % i
            deps = ", dependencies: [%s]" % prev if prev else ""
            lines.append('    - {id: %s, agents: [w], inputs: {nap: "0.%03d"}%s}' % (cue, rng.randint(20, 100), deps))
            trails[cue] = trails.get(prev, "") + cue + ";"
            prev, i = cue, i + 1
    lines += ["---", "agent:", "  id: w", "  concurrency: 50", "  provides: [trail]",
              "  command: [sh, -c, 'echo \"$ORCH_CUE_ID\" >> \"%s/count/$ORCH_CUE_ID\"; echo $$ >> \"%s/pids\"; "
              "sleep \"$ORCH_INPUT_NAP\" & echo $! >> \"%s/pids\"; wait; "
              "echo \"trail=${ORCH_INPUT_TRAIL:-}$ORCH_CUE_ID;\" >> \"$ORCH_OUTPUT\"']" % (d, d, d)]
    with open(os.path.join(d, "cuelist.yaml"), "w") as f:
        f.write("\n".join(lines) + "\n")
    save(os.path.join(d, "trails.json"), trails)

elif cmd == "snapshot":  # snapshot DIR STATUS EVENTS: after a kill, note what was recorded
    st, evs = load(sys.argv[3], {}), events(sys.argv[4])
    completed = load(os.path.join(d, "completed.json"), {})
    for c in st["cues"]:
        if c["state"] == "completed" and c["id"] not in completed:
            completed[c["id"]] = runs_of(d, c["id"])  # must never grow
    save(os.path.join(d, "completed.json"), completed)
    done = sum(c["state"] == "completed" for c in st["cues"])
    if done == 0:
        phase = "run recorded, no cue completed"
    elif done < len(st["cues"]):
        phase = "some cues completed"
    else:
        phase = "every cue completed, run not closed"
    last = evs[-1] if evs else {}
    in_go = sum(c["state"] == "go" for c in st["cues"])
    print("%s|%s %s|%s|%d" % (phase, last.get("type", "-"), last.get("state", ""), st["state"], in_go))

elif cmd == "check":  # check DIR: the invariants once the run is over; prints problems and "reruns N"
    st, evs = load(os.path.join(d, "status.json"), {}), events(os.path.join(d, "events.jsonl"))
    completed, trails = load(os.path.join(d, "completed.json"), {}), load(os.path.join(d, "trails.json"), {})
    problems, reruns = [], 0
    if st.get("state") != "completed":
        problems.append("run is %s: %s" % (st.get("state"), st.get("reason", "")))
    if len(st.get("cues", [])) != len(trails):
        problems.append("%d cues in the run, want %d" % (len(st.get("cues", [])), len(trails)))
    for c in st.get("cues", []):
        n = runs_of(d, c["id"])
        if c["state"] != "completed":
            problems.append("%s is %s: %s" % (c["id"], c["state"], c.get("reason", "")))
        if n == 0:
            problems.append("%s never ran" % c["id"])
        if c["id"] in completed and n != completed[c["id"]]:
            reruns += n - completed[c["id"]]
            problems.append("%s was completed before a kill, yet ran again (%d -> %d)" % (c["id"], completed[c["id"]], n))
        if n > len(c.get("attempts", [])):
            problems.append("%s ran %d times, %d attempts recorded" % (c["id"], n, len(c.get("attempts", []))))
        for a in c.get("attempts", []):
            if a["state"] == "running":
                problems.append("%s attempt %d still recorded as running" % (c["id"], a["number"]))
        got = (c.get("outputs") or {}).get("trail")
        if got != trails.get(c["id"]):
            problems.append("%s trail %r, want %r" % (c["id"], got, trails.get(c["id"])))
    seqs = [e["seq"] for e in evs]
    if seqs != list(range(1, len(seqs) + 1)):
        problems.append("event seqs are not 1..%d: %s..." % (len(seqs), seqs[:20]))
    db = sqlite3.connect("file:%s?mode=ro" % os.path.join(d, "orch.db"), uri=True)
    ic = [r[0] for r in db.execute("PRAGMA integrity_check")]
    db.close()
    if ic != ["ok"]:
        problems.append("integrity_check: %s" % ic)
    for p in problems:
        print("  " + p)
    print("reruns %d" % reruns)

elif cmd == "alive":  # alive DIR MARK: live processes (not zombies) carrying the mark
    needle = ("ORCH_KILLTEST_MARK=" + sys.argv[3]).encode()
    for pid in os.listdir("/proc"):
        if not pid.isdigit() or int(pid) == os.getpid():
            continue
        try:
            with open("/proc/%s/environ" % pid, "rb") as f:
                env = f.read().split(b"\0")
            with open("/proc/%s/stat" % pid) as f:
                state = f.read().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if needle in env and state not in ("Z", "X"):
            with open("/proc/%s/cmdline" % pid, "rb") as f:
                print("  left running: pid %s: %s" % (pid, f.read().replace(b"\0", b" ").decode(errors="replace")))
PY
helper() { python3 "$tmp/helper.py" "$@"; }

# random integer in [lo, hi], from the repetition's generator
rnd() { echo $((RANDOM % ($2 - $1 + 1) + $1)); }

# start_killed DIR DELAY_MS ARGS...: runs orch ARGS, kill -9 after DELAY_MS
# unless it ended first; sets $killed (1/0) and $rc.
start_killed() {
	local dir=$1 delay=$2
	shift 2
	"$orch" "$@" >>"$dir/orch.out" 2>&1 &
	local pid=$!
	sleep "$(printf '%d.%03d' $((delay / 1000)) $((delay % 1000)))"
	if kill -0 "$pid" 2>/dev/null && kill -9 "$pid" 2>/dev/null; then killed=1; else killed=0; fi
	rc=0
	{ wait "$pid"; } 2>/dev/null || rc=$? # (no "Killed" job message)
	[ "$rc" = 137 ] || killed=0 # it had ended by itself just before the kill
}

# after_kill DIR WHAT: records what the kill left; counts its phase
declare -A phases lastev ingos
after_kill() {
	local dir=$1 what=$2 out
	if ! "$orch" status last --output json >"$dir/snap.json" 2>/dev/null; then
		phases["$what: before the run was recorded"]=$((${phases["$what: before the run was recorded"]:-0} + 1))
		return 1
	fi
	"$orch" events last --output json >"$dir/snap.jsonl"
	out=$(helper snapshot "$dir" "$dir/snap.json" "$dir/snap.jsonl")
	IFS='|' read -r phase last state ingo <<<"$out"
	phases["$what: $phase"]=$((${phases["$what: $phase"]:-0} + 1))
	lastev["$last"]=$((${lastev["$last"]:-0} + 1))
	ingos["$ingo"]=$((${ingos["$ingo"]:-0} + 1))
	if [ "$state" != interrupted ]; then
		echo "  after the kill of $what the run is $state, want interrupted" >>"$dir/problems"
	fi
	return 0
}

failures=0 reruns=0 resume_kills=0 resumes=0 workdirs=0
started=$(date +%s)
for rep in $(seq "$reps"); do
	RANDOM=$((seed + rep))
	dir=$tmp/rep$rep
	mkdir -p "$dir/count"
	: >"$dir/problems"
	export ORCH_DB=$dir/orch.db ORCH_KILLTEST_MARK="$$-$rep"
	helper gen "$dir" $((seed * 1000 + rep)) 50

	start_killed "$dir" "$(rnd 50 800)" run "$dir/cuelist.yaml"
	recorded=1
	if [ "$killed" = 0 ]; then
		phases["run: after it ended (exit $rc)"]=$((${phases["run: after it ended (exit $rc)"]:-0} + 1))
		[ "$rc" = 0 ] || echo "  orch run exited $rc before the kill" >>"$dir/problems"
	elif ! after_kill "$dir" run; then
		recorded=0
	else
		if [ "$(rnd 0 2)" = 0 ]; then
			start_killed "$dir" "$(rnd 50 400)" resume last
			resumes=$((resumes + 1))
			if [ "$killed" = 1 ]; then
				resume_kills=$((resume_kills + 1))
				after_kill "$dir" resume || true
			elif [ "$rc" != 0 ]; then
				echo "  orch resume exited $rc" >>"$dir/problems"
			fi
		fi
		for try in 1 2 3; do
			[ "$("$orch" status last --output json | python3 -c 'import json,sys; print(json.load(sys.stdin)["state"])')" = completed ] && break
			resumes=$((resumes + 1))
			rc=0
			"$orch" resume last >>"$dir/orch.out" 2>&1 || rc=$?
			[ "$rc" = 0 ] && break
			echo "  orch resume last exited $rc (try $try)" >>"$dir/problems"
		done
	fi

	if [ "$recorded" = 1 ]; then
		"$orch" status last --output json >"$dir/status.json"
		"$orch" events last --output json >"$dir/events.jsonl"
		out=$(helper check "$dir")
		reruns=$((reruns + $(tail -1 <<<"$out" | cut -d' ' -f2)))
		head -n -1 <<<"$out" >>"$dir/problems"
	else
		# Killed before the run was recorded: nothing may have run.
		if [ -n "$(ls "$dir/count")" ]; then echo "  agents ran though no run was recorded" >>"$dir/problems"; fi
	fi
	helper alive "$dir" "$ORCH_KILLTEST_MARK" >>"$dir/problems"
	if [ -s "$dir/problems" ]; then
		failures=$((failures + 1))
		echo "rep $rep FAILED:"
		cat "$dir/problems"
		tail -20 "$dir/orch.out" | sed 's/^/    | /'
		# leave nothing behind
		helper alive "$dir" "$ORCH_KILLTEST_MARK" | awk '{print $4}' | tr -d : | xargs -r kill -9 2>/dev/null || true
	fi
	rm -rf "$dir"
	# work directories the killed owners could not remove (resume leaves them)
	left=$(find "$TMPDIR" -maxdepth 1 -name 'orch-run-*' | wc -l)
	workdirs=$((workdirs + left))
	rm -rf "$TMPDIR"/orch-run-*
done

echo
echo "where the kills of orch run / orch resume landed:"
for k in "${!phases[@]}"; do printf '  %-52s %4d\n' "$k" "${phases[$k]}"; done | sort
echo "cues recorded in GO (agents working) at a kill:"
for k in "${!ingos[@]}"; do printf '  %-52s %4d\n' "$k in GO" "${ingos[$k]}"; done | sort -n
echo "last event recorded before a kill:"
for k in "${!lastev[@]}"; do printf '  %-52s %4d\n' "$k" "${lastev[$k]}"; done | sort -k1,1
echo
summary() { printf '%-46s %s\n' "$1" "$2"; }
summary "repetitions:" "$reps ($(($(date +%s) - started))s)"
summary "orch resume runs:" "$resumes ($resume_kills of them killed too)"
summary "re-runs of cues completed before a kill:" "$reruns (must be 0)"
summary "work dirs left in \$TMPDIR by killed owners:" "$workdirs"
summary "failures:" "$failures"
[ "$failures" = 0 ]
