package main

import (
	"context"
	"fmt"
	"testing"

	"go.temporal.io/sdk/converter"

	"github.com/orch-cli/orch/engine/temporal"
	"github.com/orch-cli/orch/runner/record"
)

// chainedWorkflow is a run whose workflow continued as new: each execution
// has its own events, and answers for older ones with the run id of the
// execution before. Run "" is the current one.
type chainedWorkflow struct {
	current string
	execs   map[string]fakeExecution
	queries *int
}

type fakeExecution struct {
	prev   string
	events []record.Event
	done   bool
}

func (c chainedWorkflow) QueryWorkflow(_ context.Context, _, run, _ string, args ...interface{}) (converter.EncodedValue, error) {
	*c.queries++
	if run == "" {
		run = c.current
	}
	x, ok := c.execs[run]
	if !ok {
		return nil, fmt.Errorf("no execution %q", run)
	}
	after, first := args[0].(int64), x.events[0].Seq
	if after+1 < first {
		return pageValue(temporal.EventsPage{Earlier: x.prev, Run: run, First: first}), nil
	}
	p := temporal.EventsPage{Done: x.done, Run: run, First: first}
	for _, e := range x.events {
		if e.Seq > after {
			p.Events = append(p.Events, e)
		}
	}
	return pageValue(p), nil
}

// TestFollowerFollowsTheChain: a follower (here orch-temporal sync's, once)
// behind a workflow that continued as new five times reads the events the
// earlier executions logged, from each in turn, then the current one's: the
// store gets every seq once, in order. It asks each execution it has heard
// of directly, not the whole chain back from the current one each time.
func TestFollowerFollowsTheChain(t *testing.T) {
	db, _ := temporalStore(t, "r1", "tok")
	note := func(seq int64) record.Event {
		return record.Event{Seq: seq, Type: record.EvNote, Reason: fmt.Sprint("event ", seq)}
	}
	wf := chainedWorkflow{current: "x6", execs: map[string]fakeExecution{}, queries: new(int)}
	seq := int64(2)
	for i := 1; i <= 6; i++ {
		x := fakeExecution{events: []record.Event{note(seq), note(seq + 1)}}
		if i > 1 {
			x.prev = fmt.Sprint("x", i-1)
		}
		if i == 6 {
			x.events[1] = record.Event{Seq: seq + 1, Type: record.EvRunState, State: string(record.RunCompleted)}
			x.done = true
		}
		wf.execs[fmt.Sprint("x", i)] = x
		seq += 2
	}
	state, _, err := (&follower{c: wf, db: db, id: "r1", wfID: "orch-r1", token: "tok", once: true}).follow(context.Background())
	if err != nil || state != record.RunCompleted {
		t.Fatalf("follow: %v %s", err, state)
	}
	evs, err := db.Events(context.Background(), "r1", 0, 100)
	if err != nil {
		t.Fatal(err)
	}
	if len(evs) != 13 {
		t.Fatalf("the store has %d events, want 13 (run.started and seqs 2..13)", len(evs))
	}
	for i, e := range evs {
		if e.Seq != int64(i+1) {
			t.Fatalf("event %d has seq %d", i, e.Seq)
		}
	}
	// 6 back from the current one at first, then one for each of the 5
	// executions after the first: 11 (walking back each time would take 21).
	if *wf.queries > 11 {
		t.Fatalf("%d queries for 6 executions: the follower walks the chain back each time", *wf.queries)
	}
}
