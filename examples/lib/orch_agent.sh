# orch_agent.sh: helpers for `protocol: none` agents in POSIX sh, shared by
# the examples (deploy, conflicts). Sourced, not run:
#   . "$(dirname "$0")/../../lib/orch_agent.sh"
#
# A protocol: none agent gets its task as JSON on stdin, e.g.
#   {"run_id": "...", "cue_id": "CUE-200", "agent_id": "deploy-test", "attempt": 1,
#    "inputs": {"release": "1.4", "build_artifact": "app-1.4+b123.tar.gz"},
#    "blackboard": {...}, "tools": ["blackboard"]}
# and reports outputs by appending key=value lines to the file $ORCH_OUTPUT.

log() { printf '%s: %s\n' "${ORCH_AGENT_ID:-$(basename "$0" .sh)}" "$*" >&2; }

die() { code=$1; shift; log "error: $*"; exit "$code"; }

# read_task: the task JSON from stdin, on one line, in $TASK ('{}' when run by hand).
read_task() {
	if [ -t 0 ]; then TASK='{}'; else TASK=$(tr -d '\n\r'); fi
	[ -n "$TASK" ] || TASK='{}'
}

# task_get KEY [DEFAULT]: a string or scalar value named KEY anywhere in the task
# (inputs first of all; an exported key is also in the blackboard snapshot).
# Deliberately tiny: enough for simple values such as "1.4" or "app-1.4.tar.gz",
# not a JSON parser. Use Python (see examples/research) for structured values.
task_get() {
	v=$(printf '%s' "$TASK" | sed -n "s/.*\"$1\"[[:space:]]*:[[:space:]]*\"\([^\"]*\)\".*/\1/p")
	if [ -z "$v" ]; then
		v=$(printf '%s' "$TASK" | sed -n "s/.*\"$1\"[[:space:]]*:[[:space:]]*\([0-9A-Za-z.+-][0-9A-Za-z.+-]*\).*/\1/p")
	fi
	if [ -z "$v" ]; then # a blackboard entry written as {"value": "...", "version": N, ...}
		v=$(printf '%s' "$TASK" | sed -n "s/.*\"$1\"[[:space:]]*:[[:space:]]*{[^}]*\"value\"[[:space:]]*:[[:space:]]*\"\([^\"]*\)\".*/\1/p")
	fi
	printf '%s' "${v:-${2:-}}"
}

# emit KEY VALUE: report one output (one line; the value must not contain a newline).
emit() {
	if [ -n "${ORCH_OUTPUT:-}" ]; then
		printf '%s=%s\n' "$1" "$2" >>"$ORCH_OUTPUT"
	else # run by hand: show it
		printf '%s=%s\n' "$1" "$2"
	fi
}
