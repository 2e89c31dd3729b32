#!/usr/bin/env bash
# orch's own CPU per cue beside the bare spawner's (issue 34): the 200-cue
# chain of /bin/true (one at a time) and 1,000 independent /bin/true cues
# (two at a time), each against bench/spawn starting the same processes the
# same way, with the project's database already there. Orch and the spawner
# run in turn, ROUNDS times (bench/interleave.py --cpu); the figures are the
# kernel's CPU accounting (user + system) of each whole process and the
# agents it waited for, medians:
#   spawner       CPU per cue of the bare spawner (its /bin/true included)
#   orch          CPU per cue of orch run (its /bin/true included)
#   orch-spawner  orch's own cost per cue: the difference (target <= 0.5 ms)
#   orch self     orch's process alone, without its agents (ORCH_RUSAGE)
#   cpu ratio     orch / spawner, the median of the per-round ratios
#   wall ratio    the same for wall time (targets: chain <= 1.4x, wide <= 1.6x)
# Under each workload, the floor: bench/spawn -record, the spawner with a
# SQLite commit before each fork (commit-before-GO, in the same pure-Go
# SQLite, opened as orch opens its database), in the same rounds and
# against the same plain spawner; its CPU in the orch column, its cost
# over the spawner in orch-spawner. It is what no orchestrator under orch's
# rule can go below: a target's ratio is to be read against the floor's.
#   floor, min rows   one row per start (with the previous end) per commit
#   floor, orch rows  the rows orch's chained commit writes (1 UPDATE
#                     attempts, 3 UPDATE cues, 1 INSERT attempts, 6 events)
# Figures are printed, never judged: CI runs this as a benchmark.
# ORCH_BEFORE=path/to/orch adds that build (say, main's) to every round, in
# turn with the others, and prints its row under each workload: a change's
# before and after, paired on the same machine at the same time (each build
# on its own database, so a schema change does not stop the older one).
#   bench/cpu.sh [ROUNDS]
#   ORCH_BEFORE=/tmp/orch-main bench/cpu.sh [ROUNDS]
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${1:-11}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
go build -o "$tmp/orch" ./cmd/orch
go build -tags bare -o "$tmp/spawn" ./bench/spawn # the bare spawner: no SQLite linked
go build -o "$tmp/floor" ./bench/spawn
go run ./testdata/gen -cues 200 -chain -claimers 0 -no-provides -command /bin/true -max-parallel 1 >"$tmp/chain.yaml"
go run ./testdata/gen -cues 1000 -independent -claimers 0 -no-provides -command /bin/true -max-parallel 2 >"$tmp/independent.yaml"
"$tmp/orch" run --db "$tmp/db/o.db" "$tmp/chain.yaml" >/dev/null # the database exists, as usual
if [ -n "${ORCH_BEFORE:-}" ]; then # its own database: the two builds may differ in schema
	"$ORCH_BEFORE" run --db "$tmp/db-before/o.db" "$tmp/chain.yaml" >/dev/null
fi
for rows in min orch; do # the floor's databases exist too
	"$tmp/floor" -n 200 -p 1 -record "$tmp/floor-$rows" -rows "$rows" /bin/true >/dev/null
done

printf '%-34s %8s %8s %13s %10s %9s %10s\n' "workload ($rounds rounds, ms per cue)" spawner orch orch-spawner "orch self" "cpu ratio" "wall ratio"
median() { sort -n | awk '{v[NR] = $1} END {print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }
measure() { # label, cues, at a time, cuelist
	local label=$1 n=$2 p=$3 spec=$4 cpu wall self before=() selfBefore=0
	rm -f "$tmp/self" "$tmp/self-before"
	orch=(env "ORCH_RUSAGE=$tmp/self" "$tmp/orch" run --db "$tmp/db/o.db" "$spec")
	if [ -n "${ORCH_BEFORE:-}" ]; then
		before=(-- env "ORCH_RUSAGE=$tmp/self-before" "$ORCH_BEFORE" run --db "$tmp/db-before/o.db" "$spec")
	fi
	floor=(-- "$tmp/floor" -n "$n" -p "$p" -record "$tmp/floor-min" -rows min /bin/true
		-- "$tmp/floor" -n "$n" -p "$p" -record "$tmp/floor-orch" -rows orch /bin/true)
	cpu=$(python3 bench/interleave.py "$rounds" --cpu -- "$tmp/spawn" -n "$n" -p "$p" /bin/true -- "${orch[@]}" "${before[@]}" "${floor[@]}")
	wall=$(python3 bench/interleave.py "$rounds" -- "$tmp/spawn" -n "$n" -p "$p" /bin/true -- "${orch[@]}" "${before[@]}" "${floor[@]}")
	# ORCH_RUSAGE lines: "self USER SYS children USER SYS", one per orch run.
	self=$(awk '{print $2 + $3}' "$tmp/self" | median)
	if [ -n "${ORCH_BEFORE:-}" ]; then
		selfBefore=$(awk '{print $2 + $3}' "$tmp/self-before" | median)
	fi
	# interleave.py's lines: the spawner, orch, ORCH_BEFORE's (if run), the
	# floor's two; the floor has no "orch self".
	awk -v label="$label" -v n="$n" -v self="$self" -v selfBefore="$selfBefore" -v before="${#before[@]}" -v cpu="$cpu" -v wall="$wall" 'BEGIN {
		split(cpu, lines, "\n"); split(lines[1], b, " ")
		split(wall, wl, "\n")
		k = 1000 / n
		rows[2] = label; own[2] = sprintf("%10.3f", self * k)
		i = 3
		if (before > 0) {
			rows[i] = "  the same, ORCH_BEFORE"; own[i++] = sprintf("%10.3f", selfBefore * k)
		}
		rows[i] = "  floor, min rows"; own[i++] = sprintf("%10s", "-")
		rows[i] = "  floor, orch rows"; own[i++] = sprintf("%10s", "-")
		for (i = 2; i in lines; i++) {
			split(lines[i], o, " "); split(wl[i], w, " ")
			printf "%-34s %8.3f %8.3f %13.3f %s %9s %10s\n", rows[i], b[2] * k, o[2] * k, (o[2] - b[2]) * k, own[i], o[5], w[5]
		}
	}'
}
measure "200-cue chain of /bin/true" 200 1 "$tmp/chain.yaml"
measure "1,000 independent, 2 at a time" 1000 2 "$tmp/independent.yaml"
