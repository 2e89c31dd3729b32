#!/bin/sh
# conflict-reindex: rebuilds the search index of one table. The agent can only
# serve one cue at a time (concurrency: 1 in its contract), so two cues that
# target it must take turns; the lock below proves they did.
set -eu
. "$(dirname "$0")/lib.sh"
read_task
table=$(task_get table)
case $table in
'') die 2 "no table in the task's inputs" ;;
*[!a-z_]*) die 2 "bad table name: $table" ;;
esac

hold reindex
log "reindexing $table"
sleep 0.2
emit index_stats "$table: $(printf '%s' "$table" | cksum | cut -c1-4) documents indexed"
log "$table done"
