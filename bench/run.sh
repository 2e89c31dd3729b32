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
#  - the store: events/s, orch status RUN on 100,000 events, orch status with
#    10,000 runs (Go benchmarks).
#   bench/run.sh [RUNS]
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-5}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
go build -o "$tmp/orch" ./cmd/orch
go build -o "$tmp/spawn" ./bench/spawn
go run ./testdata/gen -cues 1000 -independent -claimers 0 -no-provides -command /bin/true -max-parallel 2 >"$tmp/independent.yaml"
go run ./testdata/gen -cues 200 -chain -claimers 0 -no-provides -command /bin/true -max-parallel 1 >"$tmp/chain.yaml"

best() { # best wall seconds of $runs runs of a command; FRESH=1 deletes the database before each
	local b=999999 t
	for _ in $(seq "$runs"); do
		[ -n "${FRESH:-}" ] && rm -rf "$tmp/db"
		/usr/bin/time -f "%e" -o "$tmp/time" "$@" >/dev/null 2>&1 || true
		t=$(tail -1 "$tmp/time")
		b=$(python3 -c "print(min($b, $t))")
	done
	echo "$b"
}
ratio() { python3 -c "print('%.2fx' % ($2/$1))"; }
# The usual case: the project's database exists (a first run made it).
"$tmp/orch" run --db "$tmp/db/o.db" "$tmp/chain.yaml" >/dev/null 2>&1 || true
bi=$(best "$tmp/spawn" -n 1000 -p 2 /bin/true)
oi=$(best "$tmp/orch" run --db "$tmp/db/o.db" "$tmp/independent.yaml")
bc=$(best "$tmp/spawn" -n 200 -p 1 /bin/true)
oc=$(best "$tmp/orch" run --db "$tmp/db/o.db" "$tmp/chain.yaml")
# A first run: the database is created (schema, WAL) as part of it.
fi_=$(FRESH=1 best "$tmp/orch" run --db "$tmp/db/o.db" "$tmp/independent.yaml")
fc=$(FRESH=1 best "$tmp/orch" run --db "$tmp/db/o.db" "$tmp/chain.yaml")
printf '%-44s %8s %8s %7s %10s %7s\n' "workload (best of $runs)" "bare s" "orch s" "ratio" "1st run s" "ratio"
printf '%-44s %8s %8s %7s %10s %7s\n' "1,000 independent /bin/true, 2 at a time" "$bi" "$oi" "$(ratio "$bi" "$oi")" "$fi_" "$(ratio "$bi" "$fi_")"
printf '%-44s %8s %8s %7s %10s %7s\n' "200-cue chain of /bin/true" "$bc" "$oc" "$(ratio "$bc" "$oc")" "$fc" "$(ratio "$bc" "$fc")"
echo
go test ./runner -run '^$' -bench 'ProtocolRoundTrips' -benchtime 1x | grep -E '^Benchmark|median'
go test ./runner/store -run '^$' -bench 'AppendConcurrent|RunDetail|RunsList|CueBatch' -benchtime 1s | grep -E '^Benchmark'
