#!/bin/sh
# deploy-ship: "deploys" the tested artifact to $DEPLOY_ENV (set in the contract's env)
# and reports the URL it is served at.
set -eu
. "$(dirname "$0")/../../lib/orch_agent.sh"

env=${DEPLOY_ENV:-staging}
host=${DEPLOY_HOST:-staging.example.com}

if [ "${1:-}" = --ready-check ]; then
	# STANDBY phase: is the deployment slot ready? (simulated: it always is)
	log "$env slot on $host is free"
	exit 0
fi

read_task
artifact=$(task_get build_artifact)
report=$(task_get test_report)
[ -n "$artifact" ] || die 2 "no build_artifact in the task's inputs"
case $report in
*" 0 failed"*) ;;
*) die 1 "refusing to deploy: test report is '${report:-missing}'" ;;
esac

# app-1.4+b123.tar.gz -> version 1.4
version=${artifact#app-}
version=${version%%+*}
log "deploying $artifact to $env"
sleep 0.1
emit deployment_url "https://$host/app/$version/"
log "live at https://$host/app/$version/"
