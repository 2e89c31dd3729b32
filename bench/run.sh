#!/usr/bin/env bash
# End-to-end figures for `orch run` (issue 4), each against its baseline
# measured in the same run:
#  - 1,000 independent cues running /bin/true (protocol none, max_parallel 2)
#    vs. a bare Go program starting the same 1,000 processes two at a time;
#  - a 200-cue chain vs. the same 200 processes one after another;
#    each with the project's database already there (the usual case) and as
#    a first run that creates it;
#  - the cue protocol with a jsonl agent that answers at once (Go benchmark):
#    per cue, the three exchanges added up, and end to end;
#  - the drivers' overhead per cue, jsonl and acp (an ACP agent that answers
#    at once, internal/fakeacp): GO to completed and end to end, median and
#    p99 (Go benchmark);
#  - the store: events/s, orch status RUN on 100,000 events, orch status with
#    10,000 runs (Go benchmarks).
# bare and orch run in turn, ROUNDS times (bench/interleave.py): min and
# median of each, their ratios, and the median of the per-round (paired)
# ratios. Then the chain's overhead split in one process (runner alone,
# store) without the CLI's fixed costs.
#   bench/run.sh [ROUNDS]
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-11} # rounds
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
go build -o "$tmp/orch" ./cmd/orch
go build -tags bare -o "$tmp/spawn" ./bench/spawn # the bare spawner: no SQLite linked
go run ./testdata/gen -cues 1000 -independent -claimers 0 -no-provides -command /bin/true -max-parallel 2 >"$tmp/independent.yaml"
go run ./testdata/gen -cues 200 -chain -claimers 0 -no-provides -command /bin/true -max-parallel 1 >"$tmp/chain.yaml"

# Bare and orch run in turn (interleave.py), so that the machine's drift in
# speed moves both alike; min and median of each, and their ratios.
measure() { python3 bench/interleave.py "$runs" "$@"; }
row() { # label, then the output lines of measure: baseline, orch
	local b o
	b=$(sed -n 1p <<<"$2")
	o=$(sed -n 2p <<<"$2")
	printf '%-44s %6s %6s %6s %6s %6s %6s %6s\n' "$1" $(cut -d' ' -f1,2 <<<"$b") $o
}
# The usual case: the project's database exists (a first run made it).
"$tmp/orch" run --db "$tmp/db/o.db" "$tmp/chain.yaml" >/dev/null 2>&1 || true
ind=$(measure -- "$tmp/spawn" -n 1000 -p 2 /bin/true -- "$tmp/orch" run --db "$tmp/db/o.db" "$tmp/independent.yaml")
chain=$(measure -- "$tmp/spawn" -n 200 -p 1 /bin/true -- "$tmp/orch" run --db "$tmp/db/o.db" "$tmp/chain.yaml")
# A first run: the database is created (schema, WAL) as part of it.
ind1=$(measure --fresh "$tmp/db" -- "$tmp/spawn" -n 1000 -p 2 /bin/true -- "$tmp/orch" run --db "$tmp/db/o.db" "$tmp/independent.yaml")
chain1=$(measure --fresh "$tmp/db" -- "$tmp/spawn" -n 200 -p 1 /bin/true -- "$tmp/orch" run --db "$tmp/db/o.db" "$tmp/chain.yaml")
printf '%-44s %13s %13s %13s %6s\n' "workload ($runs rounds, seconds)" "bare min/med" "orch min/med" "ratio min/med" "paired"
row "1,000 independent /bin/true, 2 at a time" "$ind"
row "200-cue chain of /bin/true" "$chain"
row "  the same, first run (database created)" "$chain1"
row "  1,000 independent, first run" "$ind1"
echo
go test ./runner -run '^$' -bench 'RunChainParts' -benchtime "${runs}x" | grep -E '^Benchmark'
go test ./runner -run '^$' -bench 'ProtocolRoundTrips' -benchtime 1x | grep -E '^Benchmark|median'
go test ./runner -run '^$' -bench 'DriverOverhead' -benchtime 1x | grep -E '^Benchmark'
go test ./runner/store -run '^$' -bench 'AppendConcurrent|RunDetail|RunsList|CueBatch' -benchtime 1s | grep -E '^Benchmark'
