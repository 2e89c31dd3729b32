package main

import (
	"context"
	"fmt"

	"github.com/orch-cli/orch/engine/temporal"
)

// maxEarlier bounds how many executions back one read follows a run's
// chain (continue-as-new): a follower that far behind reads on from there
// on its next call.
const maxEarlier = 1000

// pageAfter reads the events after seq last from the run's workflow: from
// its current execution, or, when that one began after last (the workflow
// continued as new since), from the execution before that has them,
// following the chain back (Temporal answers a query of a closed execution
// by replaying its history on a worker). earlier says the page came from
// an execution before the current one: newer events follow at once.
func pageAfter(ctx context.Context, c eventsQuerier, wfID string, last int64) (page temporal.EventsPage, earlier bool, err error) {
	run := ""
	for range maxEarlier {
		v, err := c.QueryWorkflow(ctx, wfID, run, temporal.QueryEvents, last)
		if err != nil {
			return page, false, err
		}
		page = temporal.EventsPage{}
		if err := v.Get(&page); err != nil {
			return page, false, fmt.Errorf("reading the events of workflow %s: %w", wfID, err)
		}
		if page.Earlier == "" {
			return page, run != "", nil
		}
		run = page.Earlier
	}
	return page, true, nil
}
