#!/usr/bin/env bash
# End-to-end figures for `orch plan` (issue 3): `orch plan --format json` of
# generated cuelists (1,000 and 10,000 cues, 3 dependency edges per cue, a
# tenth of the cues claiming one of 10 resources of capacity 2), and of the
# worst case for arbitration (10,000 cues on one agent of concurrency 1).
# Best wall time of RUNS runs, and peak RSS; `orch validate` of the same file
# is the baseline measured in the same run.
#   bench/plan.sh [RUNS]
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-5}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
go build -o "$tmp/orch" ./cmd/orch
go run ./testdata/gen -cues 1000 >"$tmp/1k.yaml"
go run ./testdata/gen -cues 10000 >"$tmp/10k.yaml"
go run ./testdata/gen -cues 10000 -agents 1 -one-at-a-time >"$tmp/10k-one-agent.yaml"

measure() { # measure ARGS...: best seconds and peak KB over $runs runs
	local best=999999 peak=0 t kb
	for _ in $(seq "$runs"); do
		/usr/bin/time -f "%e %M" -o "$tmp/time" "$tmp/orch" "$@" >"$tmp/out" 2>/dev/null || true
		read -r t kb < <(tail -1 "$tmp/time")
		best=$(python3 -c "print(min($best, $t))")
		peak=$((kb > peak ? kb : peak))
	done
	echo "$best $peak"
}
printf '%-34s %10s %8s %14s %8s\n' "spec" "plan s" "peak MB" "validate s" "ratio"
for f in 1k 10k 10k-one-agent; do
	read -r tp mp < <(measure plan --format json "$tmp/$f.yaml")
	conflicts=$(python3 -c "import json; print(len(json.load(open('$tmp/out'))['conflicts']))")
	read -r tv _ < <(measure validate "$tmp/$f.yaml")
	printf '%-34s %10s %8.1f %14s %7.1fx\n' "$f ($conflicts conflicts)" "$tp" "$(python3 -c "print($mp/1024)")" "$tv" "$(python3 -c "print($tp/max($tv,0.001))")"
done
