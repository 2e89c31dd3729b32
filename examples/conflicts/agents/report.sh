#!/bin/sh
# conflict-report: reads usage figures from the db (which it must not share
# with a running migration) and summarises them.
set -eu
. "$(dirname "$0")/lib.sh"
read_task

hold db
log "querying usage (cue $(task_get cue_id "${ORCH_CUE_ID:-?}"))"
sleep 0.2
schema=$(task_get schema_applied unknown) # on the blackboard if MIGRATE went first
emit report_summary "1284 active users, 311 orders (schema $schema)"
