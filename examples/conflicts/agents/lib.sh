# lib.sh: the conflict agents' helpers (and the examples' common ones). Sourced, not run:
#   . "$(dirname "$0")/lib.sh"

# The common helpers: log, die, read_task, task_get, emit.
. "$(dirname "$0")/../../lib/orch_agent.sh"

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
