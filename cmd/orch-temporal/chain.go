package main

import (
	"context"
	"fmt"
	"sort"

	"github.com/orch-cli/orch/engine/temporal"
)

// maxEarlier bounds how many executions back one read follows a run's
// chain (continue-as-new): a follower that far behind reads on from there
// on its next call.
const maxEarlier = 1000

// executions are the executions of a run's workflow a follower has heard
// of, in order: the run id of each, and the seq of its first event.
type executions struct {
	known []execution
}

type execution struct {
	run   string
	first int64
}

// learn remembers that execution run's events begin at seq first.
func (x *executions) learn(run string, first int64) {
	if run == "" || first == 0 {
		return
	}
	i := sort.Search(len(x.known), func(i int) bool { return x.known[i].first >= first })
	if i < len(x.known) && x.known[i].first == first {
		x.known[i].run = run
		return
	}
	x.known = append(x.known, execution{})
	copy(x.known[i+1:], x.known[i:])
	x.known[i] = execution{run: run, first: first}
}

// holding is the execution known to hold the event of seq: one that began
// at or before it, with a later one known to begin after it. "": none
// known, ask the current execution.
func (x *executions) holding(seq int64) string {
	i := sort.Search(len(x.known), func(i int) bool { return x.known[i].first > seq })
	if i == 0 || i == len(x.known) {
		return ""
	}
	return x.known[i-1].run
}

// pageAfter reads the events after seq last from the run's workflow: from
// the execution known to hold them, else the current one, which names the
// execution before when it began after last (the workflow continued as new
// since), back along the chain (Temporal answers a query of a closed
// execution by replaying its history on a worker). earlier says the page
// came from an execution before the current one: newer events follow at
// once.
func (x *executions) pageAfter(ctx context.Context, c eventsQuerier, wfID string, last int64) (page temporal.EventsPage, earlier bool, err error) {
	run := x.holding(last + 1)
	for range maxEarlier {
		v, err := c.QueryWorkflow(ctx, wfID, run, temporal.QueryEvents, last)
		if err != nil {
			return page, false, err
		}
		page = temporal.EventsPage{}
		if err := v.Get(&page); err != nil {
			return page, false, fmt.Errorf("reading the events of workflow %s: %w", wfID, err)
		}
		x.learn(page.Run, page.First)
		if page.Earlier == "" {
			return page, run != "", nil
		}
		run = page.Earlier
	}
	return page, true, nil
}
