#!/usr/bin/env bash
# orch mcp's figures (issue 31), with orch built here: the tools/list round
# trip from a client that starts orch mcp on stdio (start-up, initialize,
# tools/list, close) against the same binary started for orch version (the
# baseline, in the same run); and the status tool on a run of 10,000 cues
# through one session: with the Go SDK's client (which decodes the reply
# into maps), and with a client that only reads the reply's bytes.
#   bench/mcp.sh [N]   (calls per figure; default 20)
set -euo pipefail
cd "$(dirname "$0")/.."
n=${1:-20}
bin=$(mktemp -d)
trap 'rm -rf "$bin"' EXIT
go build -o "$bin/orch" ./cmd/orch
ORCH_BENCH_ORCH="$bin/orch" go test ./cmd/orch -run '^$' -bench '^BenchmarkMCP$' -benchtime "${n}x" | awk '
	/^BenchmarkMCP\// {
		name = $1; sub(/^BenchmarkMCP\//, "", name); sub(/-[0-9]+$/, "", name)
		printf "  %-24s %8.1f ms\n", name, $3 / 1e6
	}
	/^(FAIL|ok|---)/ { print "  " $0 }'
