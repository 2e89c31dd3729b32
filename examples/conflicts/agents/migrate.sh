#!/bin/sh
# conflict-migrate: applies schema migration $schema_version; needs the db alone.
set -eu
. "$(dirname "$0")/lib.sh"
read_task
version=$(task_get schema_version)
[ -n "$version" ] || die 2 "no schema_version in the task's inputs"

hold db
log "migrating to schema $version"
sleep 0.2
emit schema_applied "$version"
log "schema $version applied"
