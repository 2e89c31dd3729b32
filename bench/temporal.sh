#!/usr/bin/env bash
# Per-cue overhead of `orch run --engine temporal` against the local engine
# (issue 22), on a Temporal dev server on loopback with two `orch worker`s:
#  - a 100-cue chain of /bin/true (protocol none, max_parallel 1);
#  - 100 independent cues of /bin/true (max_parallel 2).
# Local and Temporal run in turn, ROUNDS times (bench/interleave.py), so the
# machine's drift moves both alike. Printed: min and median seconds of each,
# their ratio (min, median, paired per round), and milliseconds per cue
# (median / 100) with the Temporal engine's overhead per cue.
#   bench/temporal.sh [ROUNDS]
# The dev server comes from scripts/temporal-dev.sh (built once, cached), or
# is the one at $ORCH_TEMPORAL_ADDRESS.
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$PWD
runs=${1:-5}
cues=100
[ -d cmd/orch-temporal ] || { echo "bench/temporal.sh: cmd/orch-temporal is not in this tree (the Temporal engine)" >&2; exit 1; }
tmp=$(mktemp -d)
pids=()
cleanup() {
	# Each worker is a process group (it may run orch-temporal as a child).
	for p in ${pids[@]+"${pids[@]}"}; do kill -- "-$p" 2>/dev/null || true; done
	[ -n "${ORCH_TEMPORAL_ADDRESS:-}" ] || "$repo/scripts/temporal-dev.sh" stop --dir "$tmp/temporal" 2>/dev/null || true
	rm -rf "$tmp"
}
trap cleanup EXIT
go build -o "$tmp/" ./cmd/orch ./cmd/orch-temporal
export PATH="$tmp:$PATH" ORCH_ENGINE= ORCH_DB=
go run ./testdata/gen -cues $cues -chain -claimers 0 -no-provides -command /bin/true -max-parallel 1 >"$tmp/chain.yaml"
go run ./testdata/gen -cues $cues -independent -claimers 0 -no-provides -command /bin/true -max-parallel 2 >"$tmp/independent.yaml"

if [ -n "${ORCH_TEMPORAL_ADDRESS:-}" ]; then
	addr=$ORCH_TEMPORAL_ADDRESS
else
	port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
	addr=$("$repo/scripts/temporal-dev.sh" start --port "$port" --dir "$tmp/temporal")
fi
export TEMPORAL_ADDRESS=$addr
for i in 1 2; do
	(cd "$tmp" && exec setsid "$tmp/orch" worker --root "$tmp" >"$tmp/worker$i.log" 2>&1) &
	pids+=($!)
done

# Both engines run from $tmp, the workers' --root, with the cuelists' paths
# relative to it (a worker loads the cuelist from its own checkout).
cd "$tmp"
local_run() { echo "$tmp/orch" run --db "$tmp/local.db" "$1"; }
temporal_run() { echo "$tmp/orch" run --engine temporal --db "$tmp/temporal.db" "$1"; }
# One run of each first: databases created, the workers' first poll done.
for w in chain independent; do
	$(local_run $w.yaml) >/dev/null 2>&1
	$(temporal_run $w.yaml) >/dev/null 2>&1 || { cat "$tmp"/worker*.log >&2; exit 1; }
done

printf '%-40s %13s %13s %13s %6s  %s\n' "workload ($runs rounds, seconds)" "local min/med" "temp. min/med" "ratio min/med" "paired" "ms per cue: local, temporal, overhead"
for w in chain independent; do
	out=$(python3 "$repo/bench/interleave.py" "$runs" -- $(local_run $w.yaml) -- $(temporal_run $w.yaml))
	l=$(sed -n 1p <<<"$out")
	t=$(sed -n 2p <<<"$out")
	read -r lmin lmed _ <<<"$l"
	read -r tmin tmed rmin rmed paired <<<"$t"
	label="$cues-cue chain of /bin/true"
	[ $w = chain ] || label="$cues independent /bin/true, 2 at a time"
	printf '%-40s %6s %6s %6s %6s %6s %6s %6s  %s\n' "$label" "$lmin" "$lmed" "$tmin" "$tmed" "$rmin" "$rmed" "$paired" \
		"$(awk -v l="$lmed" -v t="$tmed" -v n=$cues 'BEGIN { printf "%.1f, %.1f, %.1f", l * 1000 / n, t * 1000 / n, (t - l) * 1000 / n }')"
done
