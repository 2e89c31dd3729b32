package main

import (
	"context"
	"fmt"
	"testing"

	"go.temporal.io/sdk/converter"

	"github.com/orch-cli/orch/engine/temporal"
	"github.com/orch-cli/orch/runner/record"
)

// chainedWorkflow is a run whose workflow continued as new twice: each
// execution has its own events, and answers for older ones with the run id
// of the execution before ("" is the current one).
type chainedWorkflow struct {
	execs map[string]execution
}

type execution struct {
	prev   string
	events []record.Event
	done   bool
}

func (c chainedWorkflow) QueryWorkflow(_ context.Context, _, run, _ string, args ...interface{}) (converter.EncodedValue, error) {
	x, ok := c.execs[run]
	if !ok {
		return nil, fmt.Errorf("no execution %q", run)
	}
	after := args[0].(int64)
	p := temporal.EventsPage{Done: x.done}
	if after+1 < x.events[0].Seq {
		return pageValue(temporal.EventsPage{Earlier: x.prev}), nil
	}
	for _, e := range x.events {
		if e.Seq > after {
			p.Events = append(p.Events, e)
		}
	}
	return pageValue(p), nil
}

// TestFollowerFollowsTheChain: a follower (here orch-temporal sync's, once)
// behind a workflow that continued as new reads the events the earlier
// executions logged, from each in turn, then the current one's: the store
// gets every seq once, in order.
func TestFollowerFollowsTheChain(t *testing.T) {
	db, _ := temporalStore(t, "r1", "tok")
	note := func(seq int64) record.Event {
		return record.Event{Seq: seq, Type: record.EvNote, Reason: fmt.Sprint("event ", seq)}
	}
	wf := chainedWorkflow{execs: map[string]execution{
		"first":  {events: []record.Event{note(2), note(3)}},
		"second": {prev: "first", events: []record.Event{note(4), note(5), note(6)}},
		"":       {prev: "second", events: []record.Event{note(7), {Seq: 8, Type: record.EvRunState, State: string(record.RunCompleted)}}, done: true},
	}}
	state, _, err := (&follower{c: wf, db: db, id: "r1", wfID: "orch-r1", token: "tok", once: true}).follow(context.Background())
	if err != nil || state != record.RunCompleted {
		t.Fatalf("follow: %v %s", err, state)
	}
	evs, err := db.Events(context.Background(), "r1", 0, 100)
	if err != nil {
		t.Fatal(err)
	}
	if len(evs) != 8 {
		t.Fatalf("the store has %d events, want 8 (run.started and seqs 2..8)", len(evs))
	}
	for i, e := range evs {
		if e.Seq != int64(i+1) {
			t.Fatalf("event %d has seq %d", i, e.Seq)
		}
	}
}
