package store

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/orch-cli/orch/runner/record"
)

// TestShortRunUsesOneConnection does what a short orch run does with its
// handle (writes its events, reads the last ones for the progress display
// and its verdict, closes) with a pool of one connection: a read or the
// last checkpoint that asked the pool for a second connection, which every
// short run used to open, would wait for it until its deadline.
func TestShortRunUsesOneConnection(t *testing.T) {
	d, _ := openTest(t)
	d.sql.SetMaxOpenConns(1)
	startRun(t, d, "r1", "a")
	appendOK(t, d,
		record.Event{RunID: "r1", Type: record.EvCueState, Cue: "a", State: "go"},
		record.Event{RunID: "r1", Type: record.EvCueState, Cue: "a", State: "completed"},
		record.Event{RunID: "r1", Type: record.EvRunState, State: "completed"})
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	events, err := d.Events(ctx, "r1", 1, 0)
	if err != nil || len(events) != 3 {
		t.Fatalf("events after the first: %d, %v", len(events), err)
	}
	if _, err := d.Commands(ctx, "r1"); err != nil {
		t.Fatal(err)
	}
	if id, err := d.ResolveRun(ctx, "last"); err != nil || id != "r1" {
		t.Fatalf("last run: %q, %v", id, err)
	}
	r, err := d.Run(ctx, "r1")
	if err != nil || r.State != record.RunCompleted || r.Cues[0].State != record.CueCompleted {
		t.Fatalf("run: %+v, %v", r, err)
	}
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	if s := d.sql.Stats(); s.WaitCount != 0 {
		t.Errorf("%d reads waited for a second connection", s.WaitCount)
	}
}

// TestReadDuringCommitUsesThePool checks that a read never waits for the
// write connection: while a commit holds it, the read takes a pooled one.
func TestReadDuringCommitUsesThePool(t *testing.T) {
	d, _ := openTest(t)
	startRun(t, d, "r1", "a")
	d.committing.Lock() // a commit in progress
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	events, err := d.Events(ctx, "r1", 0, 0)
	d.committing.Unlock()
	if err != nil || len(events) != 1 {
		t.Fatalf("events: %d, %v", len(events), err)
	}
}

// TestReadsBesideWrites reads a run's events while other goroutines write
// to it: every read sees a prefix of the log in order, nothing waits for
// ever (the test's deadline), and every write lands.
func TestReadsBesideWrites(t *testing.T) {
	d, _ := openTest(t)
	startRun(t, d, "r1", "a")
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	const writers, writes = 3, 40
	var wg sync.WaitGroup
	errs := make(chan error, writers+2)
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range writes {
				ev := record.Event{RunID: "r1", Type: record.EvCueState, Cue: "a", State: "go", Reason: fmt.Sprint(w, i)}
				if err := d.Append(ctx, ev); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	for range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range writes {
				events, err := d.Events(ctx, "r1", 0, 0)
				if err != nil {
					errs <- err
					return
				}
				for i, e := range events {
					if e.Seq != int64(i+1) {
						errs <- fmt.Errorf("event %d has seq %d", i, e.Seq)
						return
					}
				}
				if _, err := d.Run(ctx, "r1"); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	events, err := d.Events(ctx, "r1", 0, 0)
	if err != nil || len(events) != 1+writers*writes {
		t.Fatalf("events: %d, %v", len(events), err)
	}
}
