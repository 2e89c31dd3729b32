# lib.sh: helpers shared by the conflict agents. Sourced, not run:
#   . "$(dirname "$0")/lib.sh"

log() { printf '%s: %s\n' "${ORCH_AGENT_ID:-$(basename "$0" .sh)}" "$*" >&2; }

die() { code=$1; shift; log "error: $*"; exit "$code"; }

# read_task: the task JSON orch writes to stdin, on one line, in $TASK.
read_task() {
	if [ -t 0 ]; then TASK='{}'; else TASK=$(tr -d '\n\r'); fi
	[ -n "$TASK" ] || TASK='{}'
}

# task_get KEY [DEFAULT]: a simple string or scalar value named KEY in the task.
# Not a JSON parser; enough for values such as "users" or "42".
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

# emit KEY VALUE: report one output line to $ORCH_OUTPUT.
emit() {
	if [ -n "${ORCH_OUTPUT:-}" ]; then
		printf '%s=%s\n' "$1" "$2" >>"$ORCH_OUTPUT"
	else # run by hand: show it
		printf '%s=%s\n' "$1" "$2"
	fi
}

# hold NAME: take an exclusive lock for the rest of this process, or fail.
# orch's arbitration should make sure the other cue of a conflicting pair is
# not running; if it is, the lock is taken and this agent exits 1 with a
# CONFLICT message. The lock is a directory under $TMPDIR, one per run, holding
# the pid of its holder (a holder that died without cleaning up is ignored).
hold() {
	LOCK="${TMPDIR:-/tmp}/orch-example-conflicts.${ORCH_RUN_ID:-manual}.$1.lock"
	if ! mkdir "$LOCK" 2>/dev/null; then
		holder=$(cat "$LOCK/pid" 2>/dev/null || true)
		if [ -n "$holder" ] && ! kill -0 "$holder" 2>/dev/null; then
			log "removing stale lock of dead pid $holder"
			rm -rf "$LOCK"
		fi
		mkdir "$LOCK" 2>/dev/null ||
			die 1 "CONFLICT: $1 is already in use (pid ${holder:-?}); orch should have serialised these cues"
	fi
	echo $$ >"$LOCK/pid"
	trap 'rm -rf "$LOCK"' EXIT
	trap 'exit 143' TERM INT HUP
	log "holding $1"
}
