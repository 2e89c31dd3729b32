#!/bin/sh
# deploy-build: "builds" release $release into a tarball name with a build id.
# Writes nothing to disk but $ORCH_OUTPUT.
set -eu
. "$(dirname "$0")/../../lib/orch_agent.sh"

if [ "${1:-}" = --prepare ]; then
	# WARNING phase: fail early if the toolchain is missing (no stdin here).
	for tool in sed cksum tr; do
		command -v "$tool" >/dev/null 2>&1 || die 1 "missing tool: $tool"
	done
	log "toolchain ok"
	exit 0
fi

read_task
release=$(task_get release)
[ -n "$release" ] || die 2 "no release in the task's inputs"
case $release in
*[!0-9A-Za-z.-]*) die 2 "release $release: only letters, digits, '.' and '-' allowed" ;;
esac

log "building app $release (attempt $(task_get attempt 1))"
sleep 0.1
build_id=$(printf 'app %s\n' "$release" | cksum | cut -d' ' -f1)
artifact="app-$release+b$build_id.tar.gz"
emit build_artifact "$artifact"
log "built $artifact"
