#!/bin/sh
# deploy-test: checks the artifact deploy-build reported. With the run input
# simulate_flaky_test=yes, the first attempt fails with exit 75 (EX_TEMPFAIL),
# which the contract's retry policy retries once.
set -eu
. "$(dirname "$0")/../../lib/orch_agent.sh"

read_task
artifact=$(task_get build_artifact)
release=$(task_get release)
attempt=$(task_get attempt 1)
[ -n "$artifact" ] || die 2 "no build_artifact in the task's inputs"

case $(task_get simulate_flaky_test no) in
yes | true | 1)
	if [ "$attempt" = 1 ]; then
		die 75 "test sandbox went away (simulated); exit 75 asks orch to retry"
	fi
	;;
esac

passed=0
failed=0
check() { # check NAME COMMAND...
	name=$1
	shift
	if "$@"; then passed=$((passed + 1)); else failed=$((failed + 1)); log "FAIL $name"; fi
}
is_tarball() { case $artifact in *.tar.gz) return 0 ;; esac; return 1; }
has_release() { [ -z "$release" ] && return 0; case $artifact in *"-$release+"*) return 0 ;; esac; return 1; }
has_build_id() { case $artifact in *+b[0-9]*) return 0 ;; esac; return 1; }

log "testing $artifact (attempt $attempt)"
sleep 0.1
check tarball is_tarball
check release has_release
check build-id has_build_id

emit test_report "$passed passed, $failed failed: $artifact"
[ "$failed" -eq 0 ] || die 1 "$failed test(s) failed"
emit tests_passed true
log "all $passed tests passed"
