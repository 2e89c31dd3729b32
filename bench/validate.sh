#!/usr/bin/env bash
# End-to-end figures for `orch validate` (issue 2): generated cuelists of 1,000
# and 10,000 cues (3 dependency edges per cue, a tenth of them claiming a
# resource) and a ring of 10,000 cues, each timed over several runs with peak
# RSS. Prints the 10k/1k ratio, measured in the same run.
#   bench/validate.sh [RUNS]
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-5}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
go build -o "$tmp/orch" ./cmd/orch
go run ./testdata/gen -cues 1000 >"$tmp/1k.yaml"
go run ./testdata/gen -cues 10000 >"$tmp/10k.yaml"
python3 - "$tmp/ring.yaml" <<'PY'
import sys
n = 10000
with open(sys.argv[1], "w") as f:
    f.write("agent: {id: w, command: [w]}\n---\ncuelist:\n  id: ring\n  cues:\n")
    for i in range(n):
        f.write(f"    - {{id: C{i}, agents: [w], dependencies: [C{(i + 1) % n}]}}\n")
PY

# best SECONDS and peak KB over $runs runs of: orch validate FILE
measure() {
	local best=999999 peak=0 t kb
	for _ in $(seq "$runs"); do
		/usr/bin/time -f "%e %M" -o "$tmp/time" "$tmp/orch" validate "$1" >/dev/null 2>&1 || true
		read -r t kb < <(tail -1 "$tmp/time")
		best=$(python3 -c "print(min($best, $t))")
		peak=$((kb > peak ? kb : peak))
	done
	echo "$best $peak"
}
read -r t1 m1 < <(measure "$tmp/1k.yaml")
read -r t10 m10 < <(measure "$tmp/10k.yaml")
read -r tr mr < <(measure "$tmp/ring.yaml")
printf '%-28s %8s %10s\n' "spec" "best s" "peak MB"
printf '%-28s %8s %10.1f\n' "1,000 cues / ~3,000 edges" "$t1" "$(python3 -c "print($m1/1024)")"
printf '%-28s %8s %10.1f\n' "10,000 cues / ~30,000 edges" "$t10" "$(python3 -c "print($m10/1024)")"
printf '%-28s %8s %10.1f\n' "ring of 10,000 (a cycle)" "$tr" "$(python3 -c "print($mr/1024)")"
echo "ratio 10k/1k: $(python3 -c "print(round($t10/max($t1, 0.001), 1))")x (linear would be 10x)"
