package store

import (
	"context"
	"testing"

	"github.com/orch-cli/orch/runner/record"
)

// TestNoEventsAfterOwnLastAnsweredWithoutAQuery: asked for a run's events
// after the last one this handle committed, while nobody else has committed
// since, Events answers "none" without reading the store (orch run asks so
// as the run ends). Once another connection has appended, it reads them.
func TestNoEventsAfterOwnLastAnsweredWithoutAQuery(t *testing.T) {
	ctx := context.Background()
	d, path := openTest(t)
	startRun(t, d, "r1", "a")
	if _, err := d.Blackboard(ctx, "r1"); err != nil { // as every run keeps its board
		t.Fatal(err)
	}
	note := func(reason string) record.Event {
		return record.Event{RunID: "r1", Type: record.EvNote, Reason: reason}
	}
	appendOK(t, d, note("one"))
	appendOK(t, d, note("two"))
	all, err := d.Events(ctx, "r1", 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	last := all[len(all)-1].Seq
	reads := d.stats.eventReads.Load()
	if events, err := d.Events(ctx, "r1", last, 0); err != nil || len(events) != 0 {
		t.Fatalf("events after the last: %v %v, want none", events, err)
	}
	if n := d.stats.eventReads.Load() - reads; n != 0 {
		t.Errorf("%d queries for the events after this handle's last, with nobody else writing; want none", n)
	}

	other, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	appendOK(t, other, note("theirs"))
	events, err := d.Events(ctx, "r1", last, 0)
	if err != nil || len(events) != 1 || events[0].Reason != "theirs" || events[0].Seq != last+1 {
		t.Fatalf("events after another connection appended: %+v %v, want its one", events, err)
	}
	if n := d.stats.eventReads.Load() - reads; n != 1 {
		t.Errorf("%d queries after another connection appended, want 1", n)
	}
}
