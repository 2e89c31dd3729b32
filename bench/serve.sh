#!/usr/bin/env bash
# orch serve's figures (issue 20, done means): against a database of 1,000
# runs and one run of 10,000 cues (built through the store, no agents), an
# orch serve process answers GET /api/runs, /api/runs/big and /api/inbox
# (ms per request, the size of the reply) and its memory after them (RSS and
# peak RSS, MB); then another process appends events to a run at
# ORCH_BENCH_RATE events/s (default 20000; 0: as fast as it can) while a
# client follows the run's event stream: events/s written and delivered,
# how far the stream was behind when the writer finished, and the server's
# peak RSS. It fails if an event is lost or out of order.
#   bench/serve.sh [REQUESTS]   (requests per API figure; default 10)
set -euo pipefail
cd "$(dirname "$0")/.."
n=${1:-10}
echo "== API on 1,000 runs + a run of 10,000 cues (ms per request)"
go test ./cmd/orch -run '^$' -bench '^BenchmarkServe$' -benchtime "${n}x" | awk '
	/^BenchmarkServe\// {
		name = $1; sub(/^BenchmarkServe\//, "", name); sub(/-[0-9]+$/, "", name)
		if (name == "memory") printf "  server memory: %s MB RSS, %s MB peak RSS\n", $5, $7
		else printf "  GET %-8s %8.1f ms  (%s MB reply)\n", name, $3 / 1e6, $5
	}
	/^(FAIL|ok|---)/ { print "  " $0 }'
for rate in "${ORCH_BENCH_RATE:-20000}" 0; do
	echo "== event stream, writer at ${rate} events/s (0: as fast as it can)"
	ORCH_BENCH_RATE=$rate go test ./cmd/orch -run '^$' -bench '^BenchmarkServeStream$' -benchtime 1x | awk '
		/^BenchmarkServeStream/ {
			for (i = 3; i < NF; i += 2) v[$(i + 1)] = $i
			printf "  written %.0f events/s, delivered %.0f events/s, none lost; %.2f s behind at the end; server peak RSS %s MB\n",
				v["written/s"], v["delivered/s"], v["s-behind-at-end"], v["MB-peak-rss"]
		}
		/^(FAIL|---)/ { print "  " $0 }'
done
