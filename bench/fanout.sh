#!/usr/bin/env bash
# End-to-end figures for for_each (issue 30), each against its baseline
# measured in the same run:
#  - one cue fanning out over 1,000 items of /bin/true vs. 1,000 hand-written
#    independent cues of /bin/true (the same agent, max_parallel 2): orch run
#    of each in turn, ROUNDS times (bench/interleave.py), min and median of
#    each, their ratios and the median of the per-round (paired) ratios;
#  - peak RSS of orch run of 10,000 items of /bin/true, beside 10,000
#    independent cues (max_parallel 8).
# The cuelists come from testdata/gen (-for-each, -independent).
#   bench/fanout.sh [ROUNDS]
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-11}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
go build -o "$tmp/orch" ./cmd/orch
gen() { go run ./testdata/gen -agents 1 -claimers 0 -no-provides -command /bin/true "$@"; }
gen -cues 1000 -independent -max-parallel 2 >"$tmp/cues-1k.yaml"
gen -cues 1000 -for-each -max-parallel 2 >"$tmp/items-1k.yaml"
gen -cues 10000 -independent -max-parallel 8 >"$tmp/cues-10k.yaml"
gen -cues 10000 -for-each -max-parallel 8 >"$tmp/items-10k.yaml"

# The project's database exists (a first run made it), as usual.
"$tmp/orch" run --db "$tmp/db/o.db" "$tmp/items-1k.yaml" >/dev/null 2>&1
out=$(python3 bench/interleave.py "$runs" -- "$tmp/orch" run --db "$tmp/db/o.db" "$tmp/cues-1k.yaml" \
	-- "$tmp/orch" run --db "$tmp/db/o.db" "$tmp/items-1k.yaml")
printf '%-46s %13s %13s %13s %6s\n' "workload ($runs rounds, seconds)" "cues min/med" "items min/med" "ratio min/med" "paired"
b=$(sed -n 1p <<<"$out")
o=$(sed -n 2p <<<"$out")
printf '%-46s %6s %6s %6s %6s %6s %6s %6s\n' "1,000 /bin/true: for_each items vs. cues" $(cut -d' ' -f1,2 <<<"$b") $o

# peak RSS (MB) of one orch run
rss() {
	/usr/bin/time -f "%M" -o "$tmp/time" "$tmp/orch" run --db "$tmp/db/rss.db" "$1" >/dev/null 2>&1
	python3 -c "print(round($(tail -1 "$tmp/time")/1024, 1))"
}
echo
printf '%-46s %8s\n' "orch run, max_parallel 8" "peak MB"
printf '%-46s %8s\n' "10,000 independent cues of /bin/true" "$(rss "$tmp/cues-10k.yaml")"
printf '%-46s %8s\n' "10,000 for_each items of /bin/true" "$(rss "$tmp/items-10k.yaml")"
